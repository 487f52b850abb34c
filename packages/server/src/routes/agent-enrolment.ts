/**
 * @module routes/agent-enrolment
 * What agents ask of enrolment over HTTP, with no session: enrol with a token, announce
 * themselves and claim their token once approved (each proved by its own means), and fetch the
 * release key that signs agent updates (agent bearer). Operators' side: routes/enrolment-api.ts.
 */
import { encodePublicKey } from "@fleetback/crypto";
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import type { AppEnv } from "../auth/actor.js";
import { createRateLimiter } from "../auth/rate-limit.js";
import { announceHost, claimAgentToken } from "../enrolment/announce.js";
import { enrolWithToken } from "../enrolment/enrol.js";
import { RequestError } from "../errors.js";
import { authenticateAgent, UNAUTHORISED_BODY } from "../hosts/agent-auth.js";
import { limitKey } from "../http/client-address.js";
import { clientIp } from "../http/render.js";
import { readJson } from "../http/validate.js";
import { checkLabels, LabelsSchema } from "../labels/label-rules.js";

const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });

const HostInfoFields = {
  hostname: Text(253),
  os: Text(64),
  arch: Text(64),
  agent_version: Text(64),
  tool_version: Type.String({ maxLength: 64 }),
  // install.sh --label; agents before labels send none.
  labels: Type.Optional(LabelsSchema),
};

export const EnrollBody = Type.Object(
  { token: Text(256), ...HostInfoFields },
  { additionalProperties: false },
);
export const AnnounceBody = Type.Object(
  { ...HostInfoFields, public_key: Text(128) },
  { additionalProperties: false },
);
export const ClaimBody = Type.Object(
  { timestamp: Text(64), signature: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);

export function agentEnrolmentRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const announceLimiter = createRateLimiter({
    db: deps.db,
    scope: "announce-ip",
    limit: 10,
    windowMs: 60_000,
    clock: deps.clock,
  });
  // What agents pin to verify updates: base64 of the 32 raw Ed25519 public key bytes.
  const releasePublicKey = encodePublicKey(deps.releaseKey.publicKey);

  routes.post("/api/agents/enroll", async (c) => {
    const body = await readJson(c, EnrollBody);
    const enrolled = await enrolWithToken(deps, body.token, {
      hostname: body.hostname,
      os: body.os,
      arch: body.arch,
      agentVersion: body.agent_version,
      toolVersion: body.tool_version,
      labels: checkLabels(body.labels ?? {}, "labels"),
    });
    deps.log.info({ host_id: enrolled.hostId, hostname: body.hostname }, "host enrolled with a token");
    return c.json(
      { host_id: enrolled.hostId, agent_token: enrolled.agentToken, release_public_key: releasePublicKey },
      201,
    );
  });
  routes.post("/api/agents/announce", async (c) => {
    const limit = await announceLimiter.hit(limitKey(clientIp(c)));
    if (!limit.allowed) {
      throw new RequestError("rate_limited", "Too many announces from this address; wait a minute.", {
        headers: { "Retry-After": String(limit.retryAfterSeconds) },
      });
    }
    const body = await readJson(c, AnnounceBody);
    const announced = await announceHost(
      deps,
      {
        hostname: body.hostname,
        os: body.os,
        arch: body.arch,
        agentVersion: body.agent_version,
        toolVersion: body.tool_version,
        labels: checkLabels(body.labels ?? {}, "labels"),
        publicKey: body.public_key,
      },
      clientIp(c),
    );
    return c.json(
      {
        pending_id: announced.pendingId,
        fingerprint: announced.fingerprint,
        hostname_collision: announced.hostnameCollision,
      },
      201,
    );
  });
  routes.post("/api/agents/announce/:id/claim", async (c) => {
    const body = await readJson(c, ClaimBody);
    const result = await claimAgentToken(deps, c.req.param("id"), body);
    if (result.state === "pending") {
      return c.json({ status: "pending" }, 202);
    }
    deps.log.info({ host_id: result.hostId }, "announced host collected its agent token");
    return c.json({
      host_id: result.hostId,
      agent_token: result.agentToken,
      release_public_key: releasePublicKey,
    });
  });
  // For agents enrolled before the key was handed out at enrolment; they pin it on first use.
  routes.get("/api/agents/release-key", async (c) => {
    const auth = await authenticateAgent(deps.db, c.req.header("Authorization"));
    if (!auth.ok) {
      return c.json(UNAUTHORISED_BODY, 401);
    }
    return c.json({ release_public_key: releasePublicKey }, 200, { "Cache-Control": "no-store" });
  });
  return routes;
}

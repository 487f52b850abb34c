/**
 * @module routes/agent-enrolment
 * What agents ask of enrolment over HTTP, with no session: enrol with a token, announce
 * themselves and claim their token once approved (each proved by its own means), and fetch the
 * release key that signs agent updates (agent bearer). Operators' side: routes/enrolment-api.ts.
 */

import { encodePublicKey } from "@fleetback/crypto";
import { CLOSE_CODES, ERROR_CODES } from "@fleetback/protocol";
import type { Hono } from "hono";
import { type Static, Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import type { AppEnv } from "../auth/actor.js";
import { createRateLimiter, type RateLimiter } from "../auth/rate-limit.js";
import { announceHost, claimAgentToken } from "../enrolment/announce.js";
import { enrolWithToken } from "../enrolment/enrol.js";
import { RequestError } from "../errors.js";
import { authenticateAgent, UNAUTHORISED_BODY } from "../hosts/agent-auth.js";
import { limitKey } from "../http/client-address.js";
import { clientIp } from "../http/render.js";
import { checkLabels, LabelsSchema } from "../labels/label-rules.js";
import { apiGroup } from "../openapi/api-route.js";
import {
  AgentAnnounced,
  AgentEnrolled,
  AgentReleaseKey,
  ClaimPending,
} from "../openapi/fleet-access-schemas.js";

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

/** The host as its agent described itself, labels checked. */
function hostInfoOf(body: Omit<Static<typeof EnrollBody>, "token">) {
  return {
    hostname: body.hostname,
    os: body.os,
    arch: body.arch,
    agentVersion: body.agent_version,
    toolVersion: body.tool_version,
    labels: checkLabels(body.labels ?? {}, "labels"),
  };
}

const PENDING_ID = { id: "The announced host's pending id." };

/** One announce limiter per app; the release key as agents pin it. */
interface EnrolmentContext {
  deps: AppDeps;
  announceLimiter: RateLimiter;
  releasePublicKey: string;
}

export const AGENT_ENROLMENT_API = apiGroup<EnrolmentContext>({ tag: "Agents" });

AGENT_ENROLMENT_API.add({
  id: "enrolAgent",
  method: "post",
  path: "/api/agents/enroll",
  summary: "Enrol an agent with a one-time token (the agent calls this)",
  description: "The token is burned; the answer holds the agent's bearer token, shown this once.",
  access: "public",
  body: EnrollBody,
  responses: { 201: { description: "The new host and its agent token.", schema: AgentEnrolled } },
  errors: { 401: "The token is unknown, used or expired." },
  handler: async (c, { body }, { deps, releasePublicKey }) => {
    const enrolled = await enrolWithToken(deps, body.token, hostInfoOf(body));
    if (enrolled.replaced) {
      // The old machine, if it still runs, stops for good: its token no longer works anyway.
      deps.hub.send(enrolled.hostId, "error", {
        code: ERROR_CODES.hostDeleted,
        message: "This host was taken over by a successor machine.",
      });
      deps.hub.disconnect(enrolled.hostId, CLOSE_CODES.hostDeleted, "host replaced by a successor");
      deps.log.info(
        { host_id: enrolled.hostId, hostname: body.hostname },
        "a successor machine took over the host",
      );
    } else {
      deps.log.info({ host_id: enrolled.hostId, hostname: body.hostname }, "host enrolled with a token");
    }
    return c.json(
      { host_id: enrolled.hostId, agent_token: enrolled.agentToken, release_public_key: releasePublicKey },
      201,
    );
  },
});

AGENT_ENROLMENT_API.add({
  id: "announceAgent",
  method: "post",
  path: "/api/agents/announce",
  summary: "Announce an agent for approval (the agent calls this)",
  description: "`public_key` is the base64 of a 32-byte Ed25519 key. 10 per minute per address.",
  access: "public",
  body: AnnounceBody,
  responses: { 201: { description: "Waiting for an operator.", schema: AgentAnnounced } },
  errors: { 429: "Too many announces from this address, or too many hosts waiting." },
  handler: async (c, { body }, { deps, announceLimiter }) => {
    const limit = await announceLimiter.hit(limitKey(clientIp(c)));
    if (!limit.allowed) {
      throw new RequestError("rate_limited", "Too many announces from this address; wait a minute.", {
        headers: { "Retry-After": String(limit.retryAfterSeconds) },
      });
    }
    const announced = await announceHost(
      deps,
      { ...hostInfoOf(body), publicKey: body.public_key },
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
  },
});

AGENT_ENROLMENT_API.add({
  id: "claimAgentToken",
  method: "post",
  path: "/api/agents/announce/:id/claim",
  summary: "Collect the agent token once approved (the agent polls this)",
  description:
    "`signature`: Ed25519 over `fleetback-claim:{pending_id}:{timestamp}` with the announced key; the timestamp within 5 minutes of the server's clock.",
  access: "public",
  params: PENDING_ID,
  body: ClaimBody,
  responses: {
    200: { description: "Approved: the agent token, handed out once.", schema: AgentEnrolled },
    202: { description: "Not approved yet.", schema: ClaimPending },
  },
  errors: { 403: "The timestamp or the signature is wrong.", 410: "The token was already collected." },
  handler: async (c, { body }, { deps, releasePublicKey }) => {
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
  },
});

// For agents enrolled before the key was handed out at enrolment; they pin it on first use.
AGENT_ENROLMENT_API.add({
  id: "getAgentReleaseKey",
  method: "get",
  path: "/api/agents/release-key",
  summary: "The key that signs agent updates, for an agent to pin",
  access: "agent",
  responses: { 200: { description: "The key.", schema: AgentReleaseKey } },
  handler: async (c, _input, { deps, releasePublicKey }) => {
    const auth = await authenticateAgent(deps.db, c.req.header("Authorization"));
    if (!auth.ok) {
      return c.json(UNAUTHORISED_BODY, 401);
    }
    return c.json({ release_public_key: releasePublicKey }, 200, { "Cache-Control": "no-store" });
  },
});

export function agentEnrolmentRoutes(deps: AppDeps): Hono<AppEnv> {
  return AGENT_ENROLMENT_API.routes({
    deps,
    announceLimiter: createRateLimiter({
      db: deps.db,
      scope: "announce-ip",
      limit: 10,
      windowMs: 60_000,
      clock: deps.clock,
    }),
    // What agents pin to verify updates: base64 of the 32 raw Ed25519 public key bytes.
    releasePublicKey: encodePublicKey(deps.releaseKey.publicKey),
  });
}

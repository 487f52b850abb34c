/**
 * @module routes/enrolment
 * Both enrolment routes over HTTP: operators mint tokens and approve announced hosts (JSON and
 * the enrol page); agents enrol, announce and claim (no session; their own proofs), and fetch the
 * release key that signs agent updates (agent bearer).
 */
import { acceptsUrlCredentials, encodePublicKey } from "@fleetback/crypto";
import { type Context, Hono } from "hono";
import { type Static, Type } from "typebox";
import { authenticateAgent, UNAUTHORISED_BODY } from "../agent-channel/upgrade-auth.js";
import type { AppDeps } from "../app.js";
import { writeAudit } from "../audit/audit.js";
import { type Actor, type AppEnv, requireRole } from "../auth/actor.js";
import { createRateLimiter } from "../auth/rate-limit.js";
import {
  announceHost,
  approvePendingHost,
  claimAgentToken,
  listPendingHosts,
  type PendingSelection,
  rejectPendingHost,
  rejectPendingHosts,
} from "../enrolment/announce.js";
import { enrolWithToken } from "../enrolment/enrol.js";
import { listUsableTokens, type MintInput, mintEnrolmentToken } from "../enrolment/tokens.js";
import { RequestError } from "../errors.js";
import { sourceNetwork } from "../http/client-address.js";
import { plainHttpWarning } from "../http/plain-http.js";
import { clientIp, redirectAfterPost, renderPage } from "../http/render.js";
import { readForm, readJson } from "../http/validate.js";

const AbsolutePath = Type.String({ minLength: 1, maxLength: 4096, pattern: "^/" });
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });

const MintBody = Type.Object(
  {
    repository: Type.Optional(
      Type.Object(
        {
          url: Text(2048),
          username: Type.Optional(Text(256)),
          password: Type.Optional(Text(1024)),
        },
        { additionalProperties: false },
      ),
    ),
    initial_paths: Type.Optional(Type.Array(AbsolutePath, { maxItems: 100 })),
  },
  { additionalProperties: false },
);

const MintForm = Type.Object(
  {
    repository_url: Type.Optional(Type.String({ maxLength: 2048 })),
    repository_username: Type.Optional(Type.String({ maxLength: 256 })),
    repository_password: Type.Optional(Type.String({ maxLength: 1024 })),
    initial_paths: Type.Optional(Type.String({ maxLength: 100_000 })),
  },
  { additionalProperties: false },
);

const HostInfoFields = {
  hostname: Text(253),
  os: Text(64),
  arch: Text(64),
  agent_version: Text(64),
  tool_version: Type.String({ maxLength: 64 }),
};

const EnrollBody = Type.Object({ token: Text(256), ...HostInfoFields }, { additionalProperties: false });
const AnnounceBody = Type.Object(
  { ...HostInfoFields, public_key: Text(128) },
  { additionalProperties: false },
);
const ClaimBody = Type.Object(
  { timestamp: Text(64), signature: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);

const PendingId = Type.String({ minLength: 1, maxLength: 64 });
const NetworkText = Type.String({ minLength: 1, maxLength: 64 });
const BulkRejectBody = Type.Object(
  {
    ids: Type.Optional(Type.Array(PendingId, { minItems: 1, maxItems: 1000 })),
    source_network: Type.Optional(NetworkText),
  },
  { additionalProperties: false },
);
// A form sends one checked box as a string and several as an array.
const BulkRejectForm = Type.Object(
  {
    ids: Type.Optional(Type.Union([PendingId, Type.Array(PendingId, { maxItems: 1000 })])),
    source_network: Type.Optional(NetworkText),
  },
  { additionalProperties: false },
);

/** Exactly one of the two ways to choose hosts, so a request never means "all of them" by accident. */
function pendingSelection(ids: string | string[] | undefined, network: string | undefined): PendingSelection {
  const list = ids === undefined ? [] : Array.isArray(ids) ? ids : [ids];
  if (list.length > 0 === (network !== undefined)) {
    throw new RequestError(
      "invalid",
      "ids: name the hosts to reject, or give source_network instead (not both)",
    );
  }
  return network !== undefined ? { sourceNetwork: network } : { ids: list };
}

/** Waiting hosts per source network, largest first, for the page's "reject all from" buttons. */
function networksOf(pending: { sourceIp: string | null }[]): { network: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const host of pending) {
    const network = sourceNetwork(host.sourceIp ?? undefined);
    counts.set(network, (counts.get(network) ?? 0) + 1);
  }
  return [...counts].map(([network, count]) => ({ network, count })).sort((a, b) => b.count - a.count);
}

function checkMintInput(input: MintInput): MintInput {
  const repository = input.repository;
  if (repository?.username && !acceptsUrlCredentials(repository.url)) {
    throw new RequestError(
      "invalid",
      "repository.username: this repository kind takes no username in its URL (only rest: and s3: with http(s)://)",
    );
  }
  return input;
}

function mintJson(minted: Awaited<ReturnType<typeof mintEnrolmentToken>>) {
  return {
    token: minted.token,
    expires_at: minted.expiresAt,
    generated_password: minted.generatedPassword,
    htpasswd_snippet: minted.htpasswdSnippet,
    install_command: minted.installCommand,
  };
}

export function enrolmentRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const operator = requireRole("operator");
  const announceLimiter = createRateLimiter({ limit: 10, windowMs: 60_000, clock: deps.clock });
  // What agents pin to verify updates: base64 of the 32 raw Ed25519 public key bytes.
  const releasePublicKey = encodePublicKey(deps.releaseKey.publicKey);

  async function mint(actor: Actor, input: MintInput, ip: string | undefined) {
    const minted = await mintEnrolmentToken(deps, actor, checkMintInput(input));
    await writeAudit(deps.db, deps.clock, {
      actor,
      action: "enrolment_token.create",
      targetKind: "enrolment_token",
      targetId: minted.id,
      details: {
        has_repository: input.repository !== undefined,
        initial_paths: input.initialPaths?.length ?? 0,
      },
      ip,
    });
    return minted;
  }

  async function approve(actor: Actor, id: string, ip: string | undefined) {
    const { hostId } = await approvePendingHost(deps, actor, id);
    await writeAudit(deps.db, deps.clock, {
      actor,
      action: "host.approve",
      targetKind: "host",
      targetId: hostId,
      ip,
    });
    return hostId;
  }

  async function reject(actor: Actor, id: string, ip: string | undefined) {
    await rejectPendingHost(deps.db, id);
    await writeAudit(deps.db, deps.clock, {
      actor,
      action: "pending_host.reject",
      targetKind: "pending_host",
      targetId: id,
      ip,
    });
  }

  async function rejectMany(actor: Actor, selection: PendingSelection, ip: string | undefined) {
    const rejected = await rejectPendingHosts(deps.db, selection);
    // One entry per host, as a single reject writes, so the trail reads the same either way.
    for (const id of rejected) {
      await writeAudit(deps.db, deps.clock, {
        actor,
        action: "pending_host.reject",
        targetKind: "pending_host",
        targetId: id,
        details:
          "sourceNetwork" in selection
            ? { bulk: true, source_network: selection.sourceNetwork }
            : { bulk: true },
        ip,
      });
    }
    return rejected;
  }

  const actorOf = (actor: Actor | undefined): Actor => {
    if (!actor) {
      throw new RequestError("unauthorised", "Sign in first.");
    }
    return actor;
  };

  routes.post("/api/enrollment-tokens", operator, async (c) => {
    const body = await readJson(c, MintBody);
    const minted = await mint(
      actorOf(c.get("actor")),
      { repository: body.repository, initialPaths: body.initial_paths },
      clientIp(c),
    );
    return c.json(mintJson(minted), 201);
  });
  routes.get("/api/enrollment-tokens", operator, async (c) => {
    const tokens = await listUsableTokens(deps.db, deps.clock);
    return c.json({
      enrollment_tokens: tokens.map((t) => ({
        id: t.id,
        created_at: t.createdAt,
        expires_at: t.expiresAt,
        initial_paths: t.initialPaths,
        has_repository: t.hasRepository,
      })),
    });
  });
  routes.get("/api/pending-hosts", operator, async (c) => {
    const pending = await listPendingHosts(deps.db, deps.clock);
    return c.json({
      pending_hosts: pending.map((p) => ({
        id: p.id,
        hostname: p.hostname,
        os: p.os,
        arch: p.arch,
        agent_version: p.agentVersion,
        tool_version: p.toolVersion,
        fingerprint: p.fingerprint,
        source_ip: p.sourceIp,
        source_network: sourceNetwork(p.sourceIp ?? undefined),
        created_at: p.createdAt,
        expires_at: p.expiresAt,
      })),
    });
  });
  routes.post("/api/pending-hosts/:id/approve", operator, async (c) => {
    const hostId = await approve(actorOf(c.get("actor")), c.req.param("id"), clientIp(c));
    return c.json({ host_id: hostId });
  });
  routes.post("/api/pending-hosts/reject", operator, async (c) => {
    const body = await readJson(c, BulkRejectBody);
    const selection = pendingSelection(body.ids, body.source_network);
    const rejected = await rejectMany(actorOf(c.get("actor")), selection, clientIp(c));
    return c.json({ rejected });
  });
  routes.delete("/api/pending-hosts/:id", operator, async (c) => {
    await reject(actorOf(c.get("actor")), c.req.param("id"), clientIp(c));
    return c.body(null, 204);
  });

  routes.post("/api/agents/enroll", async (c) => {
    const body = await readJson(c, EnrollBody);
    const enrolled = await enrolWithToken(deps, body.token, {
      hostname: body.hostname,
      os: body.os,
      arch: body.arch,
      agentVersion: body.agent_version,
      toolVersion: body.tool_version,
    });
    deps.log.info({ host_id: enrolled.hostId, hostname: body.hostname }, "host enrolled with a token");
    return c.json(
      { host_id: enrolled.hostId, agent_token: enrolled.agentToken, release_public_key: releasePublicKey },
      201,
    );
  });
  routes.post("/api/agents/announce", async (c) => {
    const limit = announceLimiter.hit(clientIp(c) ?? "unknown");
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

  async function renderEnrolPage(c: Context<AppEnv>, minted?: ReturnType<typeof mintJson>) {
    const [tokens, pending] = await Promise.all([
      listUsableTokens(deps.db, deps.clock),
      listPendingHosts(deps.db, deps.clock),
    ]);
    return renderPage(c, deps.views, "pages/enroll.njk", {
      title: "Enrol a host",
      tokens,
      pending,
      pendingNetworks: networksOf(pending),
      minted,
      baseUrl: deps.config.baseUrl,
      plainHttpWarning: plainHttpWarning(deps.config.baseUrl),
    });
  }

  routes.get("/enroll", operator, (c) => renderEnrolPage(c));
  routes.post("/enroll", operator, async (c) => {
    const form: Static<typeof MintForm> = await readForm(c, MintForm);
    const url = form.repository_url?.trim();
    const paths = (form.initial_paths ?? "")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "");
    const badPath = paths.find((path) => !path.startsWith("/"));
    if (badPath !== undefined) {
      throw new RequestError("invalid", `initial_paths: "${badPath}" is not an absolute path`);
    }
    const minted = await mint(
      actorOf(c.get("actor")),
      {
        repository: url
          ? {
              url,
              username: form.repository_username?.trim() || undefined,
              password: form.repository_password || undefined,
            }
          : undefined,
        initialPaths: paths,
      },
      clientIp(c),
    );
    // Rendered in the response, never redirected: the secrets are shown once and never in a URL.
    return renderEnrolPage(c, mintJson(minted));
  });
  routes.post("/enroll/pending/reject", operator, async (c) => {
    const form = await readForm(c, BulkRejectForm);
    const selection = pendingSelection(form.ids, form.source_network);
    await rejectMany(actorOf(c.get("actor")), selection, clientIp(c));
    return redirectAfterPost(c, "/enroll");
  });
  routes.post("/enroll/pending/:id/approve", operator, async (c) => {
    await readForm(c, Type.Object({}, { additionalProperties: false }));
    await approve(actorOf(c.get("actor")), c.req.param("id"), clientIp(c));
    return redirectAfterPost(c, "/enroll");
  });
  routes.post("/enroll/pending/:id/reject", operator, async (c) => {
    await readForm(c, Type.Object({}, { additionalProperties: false }));
    await reject(actorOf(c.get("actor")), c.req.param("id"), clientIp(c));
    return redirectAfterPost(c, "/enroll");
  });
  return routes;
}

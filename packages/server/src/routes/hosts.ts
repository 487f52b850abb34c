/**
 * @module routes/hosts
 * A host's detail (JSON and page), deletion, credentials, bandwidth caps and manual jobs, plus
 * the two removed endpoints that now answer 410 with the way forward.
 */
import { type Context, Hono } from "hono";
import { Type } from "typebox";
import { helpUrl } from "../agent-channel/hello.js";
import type { AppDeps } from "../app.js";
import { writeAudit } from "../audit/audit.js";
import { type Actor, type AppEnv, hasRole, requireRole } from "../auth/actor.js";
import { forbidden, RequestError } from "../errors.js";
import { setHostBandwidth } from "../hosts/bandwidth.js";
import { type CredentialPatch, updateHostCredentials } from "../hosts/credentials.js";
import { deleteHost } from "../hosts/delete-host.js";
import { getHostDetail, hostDetailJson } from "../hosts/host-detail.js";
import { clientIp, redirectAfterPost, renderPage } from "../http/render.js";
import { readForm, readJson } from "../http/validate.js";
import { runAutoInit } from "../jobs/auto-init.js";
import { MANUAL_JOB_KINDS, type ManualJobKind, startManualJob } from "../maintenance/maintenance-jobs.js";

const CredentialBody = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  },
  { additionalProperties: false },
);

const CredentialForm = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 2048 })),
    username: Type.Optional(Type.String({ maxLength: 256 })),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);

const Cap = Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()]);
const BandwidthBody = Type.Object({ up_kbps: Cap, down_kbps: Cap }, { additionalProperties: false });
const CapField = Type.String({ pattern: "^([0-9]{0,8})$" });
const BandwidthForm = Type.Object(
  { up_kbps: CapField, down_kbps: CapField },
  { additionalProperties: false },
);

const JobBody = Type.Object(
  { kind: Type.Union(MANUAL_JOB_KINDS.map((kind) => Type.Literal(kind))) },
  { additionalProperties: false },
);

function actorOf(c: Context<AppEnv>): Actor {
  const actor = c.get("actor");
  if (!actor) {
    throw new RequestError("unauthorised", "Sign in first.");
  }
  return actor;
}

function formCap(value: string): number | null {
  return value === "" || value === "0" ? null : Number(value);
}

export function hostRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");
  const admin = requireRole("admin");

  async function putCredentials(c: Context<AppEnv>, slot: "repo" | "admin", patch: CredentialPatch) {
    const hostId = c.req.param("id") ?? "";
    const result = await updateHostCredentials(deps, hostId, slot, patch);
    if (!result.ok) {
      if (result.reason === "host_not_found") {
        throw new RequestError("not_found", `No host ${hostId}`);
      }
      throw new RequestError("invalid", result.errors.join("; "), { details: result.errors });
    }
    await writeAudit(deps.db, deps.clock, {
      actor: actorOf(c),
      action: slot === "repo" ? "host.repo_credentials.update" : "host.admin_credentials.update",
      targetKind: "host",
      targetId: hostId,
      details: {
        fields: Object.keys(patch).filter((key) => patch[key as keyof CredentialPatch] !== undefined),
      },
      ip: clientIp(c),
    });
    // Binding credentials to a connected host that never ran init starts it now, not at its next reconnect.
    if (slot === "repo" && deps.hub.isOnline(hostId)) {
      await runAutoInit(deps, hostId);
    }
    return result;
  }

  async function putBandwidth(c: Context<AppEnv>, upKbps: number | null, downKbps: number | null) {
    const hostId = c.req.param("id") ?? "";
    const result = await setHostBandwidth(deps, hostId, { upKbps, downKbps });
    if (!result.ok) {
      if (result.reason === "host_not_found") {
        throw new RequestError("not_found", `No host ${hostId}`);
      }
      throw new RequestError("invalid", result.errors.join("; "), { details: result.errors });
    }
    await writeAudit(deps.db, deps.clock, {
      actor: actorOf(c),
      action: "host.bandwidth.update",
      targetKind: "host",
      targetId: hostId,
      details: { up_kbps: upKbps, down_kbps: downKbps },
      ip: clientIp(c),
    });
    return result;
  }

  async function startJob(c: Context<AppEnv>, kind: ManualJobKind) {
    const hostId = c.req.param("id") ?? "";
    const actor = actorOf(c);
    if (kind === "prune" && !hasRole(actor, "admin")) {
      // Prune makes what forget removed unrecoverable (before it, `restic recover` still can).
      throw forbidden("kind: prune removes forgotten data for good; only an admin may start it");
    }
    await getHostDetail(deps.db, deps.keys.secret, hostId);
    const job = await startManualJob(deps, hostId, kind, actor.userId);
    await writeAudit(deps.db, deps.clock, {
      actor,
      action: `job.${kind}`,
      targetKind: "job",
      targetId: job.id,
      details: { host_id: hostId },
      ip: clientIp(c),
    });
    return job;
  }

  routes.get("/api/hosts/:id", viewer, async (c) => {
    const detail = await getHostDetail(deps.db, deps.keys.secret, c.req.param("id"));
    return c.json({ host: hostDetailJson(detail, deps.hub.isOnline(detail.host.id)) });
  });
  routes.delete("/api/hosts/:id", admin, async (c) => {
    const hostId = c.req.param("id");
    const deleted = await deleteHost(deps, hostId);
    await writeAudit(deps.db, deps.clock, {
      actor: actorOf(c),
      action: "host.delete",
      targetKind: "host",
      targetId: hostId,
      details: { name: deleted.name },
      ip: clientIp(c),
    });
    return c.body(null, 204);
  });
  routes.put("/api/hosts/:id/repo-credentials", admin, async (c) => {
    const result = await putCredentials(c, "repo", await readJson(c, CredentialBody));
    return c.json({ pushed: result.pushed });
  });
  routes.put("/api/hosts/:id/admin-credentials", admin, async (c) => {
    const result = await putCredentials(c, "admin", await readJson(c, CredentialBody));
    return c.json({ pushed: result.pushed });
  });
  routes.put("/api/hosts/:id/bandwidth", operator, async (c) => {
    const body = await readJson(c, BandwidthBody);
    const result = await putBandwidth(c, body.up_kbps, body.down_kbps);
    return c.json({ caps: result.caps, pushed: result.pushed });
  });
  routes.post("/api/hosts/:id/jobs", operator, async (c) => {
    const body = await readJson(c, JobBody);
    const job = await startJob(c, body.kind);
    return c.json({ job_id: job.id, status: job.status }, 201);
  });

  routes.get("/hosts/:id", viewer, async (c) => {
    const detail = await getHostDetail(deps.db, deps.keys.secret, c.req.param("id"));
    return renderPage(c, deps.views, "pages/host.njk", {
      title: detail.host.name,
      detail,
      connected: deps.hub.isOnline(detail.host.id),
      helpUrl: helpUrl(deps.config.baseUrl),
    });
  });
  routes.post("/hosts/:id/credentials/:slot", admin, async (c) => {
    const slot = c.req.param("slot");
    if (slot !== "repo" && slot !== "admin") {
      throw new RequestError("not_found", `No credential slot ${slot}`);
    }
    const form = await readForm(c, CredentialForm);
    await putCredentials(c, slot, {
      url: form.url?.trim() || undefined,
      username: form.username?.trim() || undefined,
      password: form.password || undefined,
    });
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}`);
  });
  routes.post("/hosts/:id/bandwidth", operator, async (c) => {
    const form = await readForm(c, BandwidthForm);
    await putBandwidth(c, formCap(form.up_kbps), formCap(form.down_kbps));
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}`);
  });
  routes.post("/hosts/:id/jobs", operator, async (c) => {
    const form = await readForm(c, JobBody);
    const job = await startJob(c, form.kind);
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}?started=${job.id}`);
  });
  routes.post("/hosts/:id/delete", admin, async (c) => {
    await readForm(c, Type.Object({}, { additionalProperties: false }));
    const hostId = c.req.param("id");
    const deleted = await deleteHost(deps, hostId);
    await writeAudit(deps.db, deps.clock, {
      actor: actorOf(c),
      action: "host.delete",
      targetKind: "host",
      targetId: hostId,
      details: { name: deleted.name },
      ip: clientIp(c),
    });
    return redirectAfterPost(c, "/");
  });

  // Removed in favour of source groups (run-now) and automatic/manual init jobs.
  routes.post("/hosts/:id/run-backup", (c) =>
    c.text(
      "Gone: run a backup from a source group instead (POST /hosts/{id}/source-groups/{gid}/run, or the Run now button on the host page).",
      410,
    ),
  );
  routes.post("/hosts/:id/init-repo", (c) =>
    c.text(
      'Gone: the repository is initialised automatically when credentials are bound; to run it again use POST /api/hosts/{id}/jobs with {"kind":"init"} or the Initialise button on the host page.',
      410,
    ),
  );
  return routes;
}

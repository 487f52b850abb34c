/**
 * @module routes/mirror-api
 * A host's mirror as JSON (issue 18, 3-2-1): bind or change its credentials and remove it
 * (admins: the mirror is where the second copy of every backup lives), and copy now (operators).
 * Its state is part of GET /api/hosts/{id} (`mirror`). The page forms are in routes/mirror-pages.ts.
 */
import type { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import { putCredentials } from "../fleet/host-requests.js";
import { CredentialBody } from "../hosts/credential-body.js";
import { LOGIN_PASSWORD_CONFLICT } from "../hosts/login-password-gate.js";
import { copyNow, removeMirror } from "../mirror/mirror-requests.js";
import { actOnPathId, apiGroup, HOST_ID, NO_CONTENT } from "../openapi/api-route.js";
import { MirrorCredentialsAnswer } from "../openapi/host-schemas.js";
import { JobStartedWithStatus } from "../openapi/job-schemas.js";

export const MIRROR_API = apiGroup<AppDeps>({ tag: "Mirror" });

MIRROR_API.add({
  id: "putMirrorCredentials",
  method: "put",
  path: "/api/hosts/:id/mirror-credentials",
  summary: "Bind or change the mirror repository",
  description:
    'After every good backup a copy job brings the host\'s snapshots to the mirror. Fields as for the repository credentials: `username` or `login_password` null or "" removes it; a `login_password` needs an agent of protocol 11.',
  access: "admin",
  params: HOST_ID,
  body: CredentialBody,
  responses: { 200: { description: "Stored.", schema: MirrorCredentialsAnswer } },
  errors: { 409: LOGIN_PASSWORD_CONFLICT },
  handler: async (c, { body }, deps) => {
    await putCredentials(deps, auditOf(c), c.req.param("id"), "mirror", body);
    return c.json({ ok: true });
  },
});

MIRROR_API.add({
  id: "deleteMirrorCredentials",
  method: "delete",
  path: "/api/hosts/:id/mirror-credentials",
  summary: "Remove the mirror",
  description: "Resolves the host's mirror_failed alerts; the mirror's data is not touched.",
  access: "admin",
  params: HOST_ID,
  responses: NO_CONTENT,
  handler: actOnPathId(removeMirror),
});

MIRROR_API.add({
  id: "copyToMirror",
  method: "post",
  path: "/api/hosts/:id/mirror/copy",
  summary: "Copy the host's snapshots to the mirror now",
  access: "operator",
  params: HOST_ID,
  responses: { 201: { description: "The copy job.", schema: JobStartedWithStatus } },
  errors: {
    409: "No mirror, an agent that cannot copy, nothing to copy yet, or a copy already queued or running.",
    503: "The host is offline.",
  },
  handler: async (c, _input, deps) => {
    const job = await copyNow(deps, auditOf(c), c.req.param("id"));
    return c.json({ job_id: job.id, status: job.status }, 201);
  },
});

export function mirrorApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return MIRROR_API.routes(deps);
}

/**
 * @module routes/hosts-api
 * A host's JSON routes: detail, deletion, credentials, bandwidth caps, keeper, deletion holds and
 * manual jobs, each defined once with what the OpenAPI document says of it. The page and its
 * forms are in routes/hosts-pages.ts; what both check is in fleet/host-requests.ts.
 */
import type { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import { getHostDetail, hostDetailJson } from "../fleet/host-detail.js";
import { JobBody, putBandwidth, putCredentials, startHostJob } from "../fleet/host-requests.js";
import { CredentialBody } from "../hosts/credential-body.js";
import { deleteHost } from "../hosts/delete-host.js";
import { LOGIN_PASSWORD_CONFLICT } from "../hosts/login-password-gate.js";
import { RenameHostBody, renameHost } from "../hosts/rename-host.js";
import { setKeeper } from "../keepers/keeper-assignment.js";
import { MANUAL_JOB_KINDS } from "../maintenance/maintenance-jobs.js";
import { ReleaseHoldBody, releaseHold } from "../maintenance/release-hold.js";
import { actOnPathId, apiGroup, HOST_ID, NO_CONTENT } from "../openapi/api-route.js";
import {
  BandwidthAnswer,
  CredentialsPushed,
  HostAnswer,
  KeeperAnswer,
  ReleaseHoldAnswer,
  RenamedHost,
} from "../openapi/host-schemas.js";
import { JobStartedWithStatus } from "../openapi/job-schemas.js";

const Cap = Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()]);
export const BandwidthBody = Type.Object({ up_kbps: Cap, down_kbps: Cap }, { additionalProperties: false });
export const KeeperBody = Type.Object(
  { keeper_host_id: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()]) },
  { additionalProperties: false },
);

export const HOST_API = apiGroup<AppDeps>({ tag: "Hosts" });

HOST_API.add({
  id: "getHost",
  method: "get",
  path: "/api/hosts/:id",
  summary: "One host",
  description:
    "Credential slots show their URL (without password), their user and whether a separate login password is set, never a password.",
  access: "viewer",
  params: HOST_ID,
  responses: { 200: { description: "The host.", schema: HostAnswer } },
  handler: async (c, _input, deps) => {
    const detail = await getHostDetail(deps.db, deps.keys.secret, c.req.param("id"));
    return c.json({ host: hostDetailJson(detail, deps.hub.isOnline(detail.host.id)) });
  },
});

HOST_API.add({
  id: "renameHost",
  method: "patch",
  path: "/api/hosts/:id",
  summary: "Rename a host",
  description:
    "The name pages, alerts and the in-place restore confirmation use; 1 to 253 characters, no control characters, no space at either end, and no other host's name in any case. The restic hostname its backups are made under stays. Audited as host.rename with the old and new name.",
  access: "operator",
  params: HOST_ID,
  body: RenameHostBody,
  responses: { 200: { description: "The host's id and new name.", schema: RenamedHost } },
  errors: { 409: "Another host has this name." },
  handler: async (c, { body }, deps) => {
    const renamed = await renameHost(deps, auditOf(c), c.req.param("id"), body.name);
    return c.json({ host: renamed });
  },
});

HOST_API.add({
  id: "deleteHost",
  method: "delete",
  path: "/api/hosts/:id",
  summary: "Delete a host",
  description:
    "Its agent is disconnected; its jobs, cached snapshots and alerts go with it. Its repository is not touched.",
  access: "admin",
  params: HOST_ID,
  responses: NO_CONTENT,
  handler: actOnPathId(deleteHost),
});

// The two slots take the same body and differ in when the agent gets them.
const CREDENTIAL_ROUTES = [
  {
    slot: "repo",
    id: "putRepoCredentials",
    summary: "Set the repository credentials",
    description:
      'Merged with the stored ones; sent to the agent at once when it is connected. `username` or `login_password` null or "" removes it. A `login_password` (the repository server login, apart from the repository password) is refused with 409 while an agent older than protocol 11 is connected: it would log in with the repository password.',
  },
  {
    slot: "admin",
    id: "putAdminCredentials",
    summary: "Set the admin credentials (needed by prune and unlock)",
    description:
      'Merged with the stored ones; sent to the agent only right before a job needs them. `username` or `login_password` null or "" removes it; a `login_password` needs an agent of protocol 11 (409 while an older one is connected).',
  },
] as const;

for (const { slot, id, summary, description } of CREDENTIAL_ROUTES) {
  HOST_API.add({
    id,
    method: "put",
    path: `/api/hosts/:id/${slot}-credentials`,
    summary,
    description,
    access: "admin",
    params: HOST_ID,
    body: CredentialBody,
    responses: { 200: { description: "Stored.", schema: CredentialsPushed } },
    errors: { 409: LOGIN_PASSWORD_CONFLICT },
    handler: async (c, { body }, deps) => {
      const result = await putCredentials(deps, auditOf(c), c.req.param("id"), slot, body);
      return c.json({ pushed: result.pushed });
    },
  });
}

HOST_API.add({
  id: "putBandwidth",
  method: "put",
  path: "/api/hosts/:id/bandwidth",
  summary: "Set the host-wide upload and download caps (KiB/s, null for none)",
  access: "operator",
  params: HOST_ID,
  body: BandwidthBody,
  responses: { 200: { description: "Stored, and pushed when connected.", schema: BandwidthAnswer } },
  handler: async (c, { body }, deps) => {
    const result = await putBandwidth(deps, auditOf(c), c.req.param("id"), body.up_kbps, body.down_kbps);
    return c.json({ caps: result.caps, pushed: result.pushed });
  },
});

HOST_API.add({
  id: "putKeeper",
  method: "put",
  path: "/api/hosts/:id/keeper",
  summary: "Designate the keeper of the host's repository (null: none)",
  description:
    "A host with a keeper is protected: it never receives the repository's delete-capable (admin) or mirror credentials; forget, prune, unlock, check and mirror copies run on the keeper. The keeper's agent must speak protocol 12.",
  access: "admin",
  params: HOST_ID,
  body: KeeperBody,
  responses: {
    200: { description: "Stored, and the host's agent told when connected.", schema: KeeperAnswer },
  },
  errors: {
    400: "The keeper is the host itself or does not exist.",
    409: "The keeper's agent is too old to keep.",
  },
  handler: async (c, { body }, deps) => {
    const change = await setKeeper(deps, auditOf(c), c.req.param("id"), body.keeper_host_id);
    return c.json({ keeper_host_id: change.keeperHostId, pushed: change.pushed });
  },
});

HOST_API.add({
  id: "releaseDeletionHold",
  method: "post",
  path: "/api/hosts/:id/deletion-holds/:hid/release",
  summary: "Release a deletion hold, saying why; for a large_forget hold, run exactly the held forget",
  access: "admin",
  params: { ...HOST_ID, hid: "The hold's id." },
  body: ReleaseHoldBody,
  responses: { 200: { description: "Released (audited).", schema: ReleaseHoldAnswer } },
  errors: {
    404: "No open hold of that id on the host.",
    409: "The held forget could not start (the keeper is offline, another hold stands); the hold stays.",
  },
  handler: async (c, { body }, deps) => {
    const released = await releaseHold(deps, auditOf(c), c.req.param("id"), c.req.param("hid"), body.reason);
    return c.json({ released: true, job_id: released.jobId });
  },
});

HOST_API.add({
  id: "startHostJob",
  method: "post",
  path: "/api/hosts/:id/jobs",
  tag: "Jobs",
  summary: "Start a manual repository job",
  description: `\`kind\`: ${MANUAL_JOB_KINDS.join(", ")}. prune needs an admin.`,
  access: "operator",
  params: HOST_ID,
  body: JobBody,
  responses: { 201: { description: "The job.", schema: JobStartedWithStatus } },
  errors: {
    409: "A job of that kind is already queued or running, or the host cannot run it.",
    503: "The host is offline.",
  },
  handler: async (c, { body }, deps) => {
    const job = await startHostJob(deps, auditOf(c), c.req.param("id"), body.kind);
    return c.json({ job_id: job.id, status: job.status }, 201);
  },
});

export function hostApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return HOST_API.routes(deps);
}

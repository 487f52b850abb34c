/**
 * @module routes/hosts-api
 * A host's JSON routes: detail, deletion, credentials, bandwidth caps, keeper, deletion holds and
 * manual jobs. The page
 * and its forms are in routes/hosts-pages.ts; what both check is in fleet/host-requests.ts.
 */
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { getHostDetail, hostDetailJson } from "../fleet/host-detail.js";
import { JobBody, putBandwidth, putCredentials, startHostJob } from "../fleet/host-requests.js";
import { CredentialBody } from "../hosts/credential-body.js";
import { deleteHost } from "../hosts/delete-host.js";
import { RenameHostBody, renameHost } from "../hosts/rename-host.js";
import { readJson } from "../http/validate.js";
import { setKeeper } from "../keepers/keeper-assignment.js";
import { ReleaseHoldBody, releaseHold } from "../maintenance/release-hold.js";

const Cap = Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()]);
export const BandwidthBody = Type.Object({ up_kbps: Cap, down_kbps: Cap }, { additionalProperties: false });
export const KeeperBody = Type.Object(
  { keeper_host_id: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()]) },
  { additionalProperties: false },
);

export function hostApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");
  const admin = requireRole("admin");

  routes.get("/api/hosts/:id", viewer, async (c) => {
    const detail = await getHostDetail(deps.db, deps.keys.secret, c.req.param("id"));
    return c.json({ host: hostDetailJson(detail, deps.hub.isOnline(detail.host.id)) });
  });
  routes.patch("/api/hosts/:id", operator, async (c) => {
    const body = await readJson(c, RenameHostBody);
    const renamed = await renameHost(deps, auditOf(c), c.req.param("id"), body.name);
    return c.json({ host: renamed });
  });
  routes.delete("/api/hosts/:id", admin, async (c) => {
    const hostId = c.req.param("id");
    await deleteHost(deps, auditOf(c), hostId);
    return c.body(null, 204);
  });
  routes.put("/api/hosts/:id/repo-credentials", admin, async (c) => {
    const body = await readJson(c, CredentialBody);
    const result = await putCredentials(deps, auditOf(c), c.req.param("id"), "repo", body);
    return c.json({ pushed: result.pushed });
  });
  routes.put("/api/hosts/:id/admin-credentials", admin, async (c) => {
    const body = await readJson(c, CredentialBody);
    const result = await putCredentials(deps, auditOf(c), c.req.param("id"), "admin", body);
    return c.json({ pushed: result.pushed });
  });
  routes.put("/api/hosts/:id/bandwidth", operator, async (c) => {
    const body = await readJson(c, BandwidthBody);
    const result = await putBandwidth(deps, auditOf(c), c.req.param("id"), body.up_kbps, body.down_kbps);
    return c.json({ caps: result.caps, pushed: result.pushed });
  });
  routes.put("/api/hosts/:id/keeper", admin, async (c) => {
    const body = await readJson(c, KeeperBody);
    const change = await setKeeper(deps, auditOf(c), c.req.param("id"), body.keeper_host_id);
    return c.json({ keeper_host_id: change.keeperHostId, pushed: change.pushed });
  });
  routes.post("/api/hosts/:id/deletion-holds/:hid/release", admin, async (c) => {
    const body = await readJson(c, ReleaseHoldBody);
    const released = await releaseHold(deps, auditOf(c), c.req.param("id"), c.req.param("hid"), body.reason);
    return c.json({ released: true, job_id: released.jobId });
  });
  routes.post("/api/hosts/:id/jobs", operator, async (c) => {
    const body = await readJson(c, JobBody);
    const job = await startHostJob(deps, auditOf(c), c.req.param("id"), body.kind);
    return c.json({ job_id: job.id, status: job.status }, 201);
  });
  return routes;
}

/**
 * Walks the app's route table: every route must be listed here with the role it needs (or as
 * public), so a new route cannot ship without a decision about who may call it. Then each
 * protected route is called without a session (401, or a redirect to sign-in for pages) and
 * with the role just below the one it needs (403).
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../app.js";
import type { Role } from "../auth/actor.js";
import type { TestClient } from "../testing/http.js";
import { signInOn } from "../testing/signed-in-app.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";

type Access = Role | "public";

const EXPECTED: Record<string, Access> = {
  "GET /healthz": "public",
  "GET /readyz": "public",
  // No session role: its own bearer token or source network (routes/metrics.test.ts).
  "GET /metrics": "public",
  "GET /static/:name": "public",
  "POST /api/auth/bootstrap": "public",
  "POST /api/auth/login": "public",
  "POST /api/auth/logout": "viewer",
  "GET /api/auth/me": "viewer",
  "PUT /api/auth/me/password": "viewer",
  "GET /bootstrap": "public",
  "POST /bootstrap": "public",
  "GET /login": "public",
  "POST /login": "public",
  "POST /logout": "viewer",
  "GET /account/password": "viewer",
  "POST /account/password": "viewer",
  "GET /docs/agent-upgrade": "public",
  "GET /": "viewer",
  "GET /api/dashboard": "viewer",
  "GET /hosts": "viewer",
  "GET /partials/fleet": "viewer",
  "GET /api/hosts": "viewer",
  "GET /api/users": "admin",
  "POST /api/users": "admin",
  "PUT /api/users/:id": "admin",
  "DELETE /api/users/:id": "admin",
  "POST /api/users/:id/password": "admin",
  "GET /settings/users": "admin",
  "POST /settings/users": "admin",
  "POST /settings/users/:id": "admin",
  "POST /settings/users/:id/password": "admin",
  "GET /api/api-tokens": "viewer",
  "POST /api/api-tokens": "viewer",
  "DELETE /api/api-tokens/:id": "viewer",
  "GET /settings/tokens": "viewer",
  "POST /settings/tokens": "viewer",
  "POST /settings/tokens/:id/revoke": "viewer",
  "GET /api/audit": "admin",
  "GET /api/reports/evidence": "viewer",
  "GET /api/reports/digest": "viewer",
  "GET /api/reports/schedules": "admin",
  "POST /api/reports/schedules": "admin",
  "PUT /api/reports/schedules/:id": "admin",
  "DELETE /api/reports/schedules/:id": "admin",
  "GET /api/reports/evidence.csv": "viewer",
  "GET /reports/evidence": "viewer",
  "GET /reports/digest": "viewer",
  "GET /reports/evidence/print": "viewer",
  "GET /api/search/files": "operator",
  "GET /api/hosts/:id/file-versions": "operator",
  "GET /search": "operator",
  "GET /hosts/:id/versions": "operator",
  "GET /audit": "admin",
  "GET /api/notification-channels": "admin",
  "POST /api/notification-channels": "admin",
  "GET /api/notification-channels/:id": "admin",
  "PUT /api/notification-channels/:id": "admin",
  "DELETE /api/notification-channels/:id": "admin",
  "POST /api/notification-channels/:id/test": "admin",
  "GET /settings/notifications": "admin",
  "POST /settings/notifications": "admin",
  "POST /settings/notifications/:id": "admin",
  "POST /settings/notifications/:id/state": "admin",
  "POST /settings/notifications/:id/delete": "admin",
  "POST /settings/notifications/:id/test": "admin",
  "POST /settings/notifications/reports": "admin",
  "POST /settings/notifications/reports/:id/delete": "admin",
  "POST /api/enrollment-tokens": "operator",
  "GET /api/enrollment-tokens": "operator",
  "DELETE /api/enrollment-tokens/:id": "operator",
  "POST /api/hosts/:id/successor-token": "admin",
  "POST /api/hosts/:id/recover": "operator",
  "GET /api/pending-hosts": "operator",
  "POST /api/pending-hosts/:id/approve": "operator",
  "DELETE /api/pending-hosts/:id": "operator",
  "POST /api/pending-hosts/reject": "operator",
  "POST /api/agents/enroll": "public",
  "POST /api/agents/announce": "public",
  "POST /api/agents/announce/:id/claim": "public",
  "GET /enroll": "operator",
  "POST /enroll": "operator",
  "POST /enroll/tokens/:id/revoke": "operator",
  "GET /enroll/pending/:id/approve": "operator",
  "POST /enroll/pending/:id/approve": "operator",
  "POST /enroll/pending/:id/reject": "operator",
  "POST /enroll/pending/reject": "operator",
  "GET /api/hosts/:id": "viewer",
  "DELETE /api/hosts/:id": "admin",
  "PATCH /api/hosts/:id": "operator",
  "PUT /api/hosts/:id/repo-credentials": "admin",
  "PUT /api/hosts/:id/admin-credentials": "admin",
  "PUT /api/hosts/:id/mirror-credentials": "admin",
  "DELETE /api/hosts/:id/mirror-credentials": "admin",
  "POST /api/hosts/:id/mirror/copy": "operator",
  "PUT /api/hosts/:id/bandwidth": "operator",
  "GET /api/hosts/:id/labels": "viewer",
  "PUT /api/hosts/:id/labels": "operator",
  "PATCH /api/hosts/:id/labels": "operator",
  "POST /api/hosts/labels": "operator",
  "GET /api/policies": "viewer",
  "POST /api/policies": "admin",
  "POST /api/policies/preview": "viewer",
  "GET /api/policies/:id": "viewer",
  "PUT /api/policies/:id": "admin",
  "DELETE /api/policies/:id": "admin",
  "POST /api/policies/:id/preview": "viewer",
  "GET /api/policies/:id/versions": "viewer",
  "GET /api/policies/:id/versions/:version": "viewer",
  "POST /api/policies/:id/versions/:version/rollback": "admin",
  "GET /api/hosts/:id/policies": "viewer",
  "GET /api/fleet-config": "viewer",
  "POST /api/hosts/actions": "operator",
  "POST /api/hosts/delete": "admin",
  "POST /api/agent-rollouts": "admin",
  "GET /api/agent-rollouts": "viewer",
  "GET /api/agent-rollouts/:id": "viewer",
  "POST /api/fleet-config/apply": "admin",
  "POST /hosts/actions": "operator",
  "POST /hosts/labels": "operator",
  "GET /policies": "viewer",
  "GET /policies/:id": "viewer",
  "POST /policies/preview": "admin",
  "POST /policies": "admin",
  "POST /policies/:id/preview": "admin",
  "POST /policies/:id": "admin",
  "POST /policies/:id/versions/:version/rollback": "admin",
  "POST /policies/:id/delete": "admin",
  "PUT /api/hosts/:id/keeper": "admin",
  "POST /api/hosts/:id/recovery-kit": "admin",
  "POST /api/recovery-kit": "admin",
  "POST /api/hosts/:id/deletion-holds/:hid/release": "admin",
  "POST /api/hosts/:id/jobs": "operator",
  "GET /hosts/:id": "viewer",
  "POST /hosts/:id/labels": "operator",
  "POST /hosts/:id/credentials/:slot": "admin",
  "POST /hosts/:id/mirror": "admin",
  "POST /hosts/:id/mirror/remove": "admin",
  "POST /hosts/:id/mirror/copy": "operator",
  "POST /hosts/:id/bandwidth": "operator",
  "POST /hosts/:id/keeper": "admin",
  "GET /hosts/:id/recovery-kit": "admin",
  "POST /hosts/:id/recovery-kit": "admin",
  "GET /recovery-kit": "admin",
  "POST /recovery-kit": "admin",
  "POST /hosts/:id/deletion-holds/:hid/release": "admin",
  "POST /hosts/:id/jobs": "operator",
  "POST /hosts/:id/delete": "admin",
  "POST /hosts/:id/successor-token": "admin",
  "POST /hosts/:id/recover": "operator",
  "POST /hosts/:id/rename": "operator",
  "POST /hosts/:id/run-backup": "public",
  "POST /hosts/:id/init-repo": "public",
  "GET /install/install.sh": "public",
  "GET /install/agent/:version/:platform": "public",
  "GET /install/agent/:version": "public",
  "GET /api/agents/release-key": "public",
  "POST /api/agent-updates": "admin",
  "POST /agent-updates": "admin",
  "GET /agent-rollouts": "viewer",
  "GET /agent-rollouts/:id": "viewer",
  "POST /agent-rollouts": "admin",
  "GET /api/agent-versions": "viewer",
  "GET /api/release-key": "viewer",
  "GET /api/jobs": "viewer",
  "GET /api/jobs/:id": "viewer",
  "GET /api/jobs/:id/logs": "viewer",
  "GET /api/hosts/:id/source-groups": "viewer",
  "POST /api/hosts/:id/source-groups": "operator",
  "GET /api/hosts/:id/source-groups/:gid": "viewer",
  "PUT /api/hosts/:id/source-groups/:gid": "operator",
  "DELETE /api/hosts/:id/source-groups/:gid": "operator",
  "POST /api/hosts/:id/source-groups/:gid/run": "operator",
  "PUT /api/hosts/:id/hooks": "admin",
  "GET /hosts/:id/sources": "viewer",
  "POST /hosts/:id/source-groups": "operator",
  "POST /hosts/:id/source-groups/:gid": "operator",
  "POST /hosts/:id/source-groups/:gid/delete": "operator",
  "POST /hosts/:id/source-groups/:gid/run": "operator",
  "POST /hosts/:id/hooks": "admin",
  "GET /api/hosts/:id/schedules": "viewer",
  "POST /api/hosts/:id/schedules": "operator",
  "PUT /api/hosts/:id/schedules/:sid": "operator",
  "DELETE /api/hosts/:id/schedules/:sid": "operator",
  "POST /hosts/:id/schedules": "operator",
  "POST /hosts/:id/schedules/:sid": "operator",
  "POST /hosts/:id/schedules/:sid/delete": "operator",
  "POST /api/jobs/:id/cancel": "operator",
  "GET /jobs/:id": "viewer",
  "GET /jobs/:id/stream": "viewer",
  "POST /jobs/:id/cancel": "operator",
  "GET /hosts/:id/jobs": "viewer",
  "GET /api/hosts/:id/snapshots": "viewer",
  "GET /hosts/:id/snapshots": "viewer",
  "GET /hosts/:id/snapshots/:sid/forget": "admin",
  "POST /hosts/:id/snapshots/:sid/forget": "admin",
  "POST /api/hosts/:id/snapshots/:sid/forget": "admin",
  "GET /api/hosts/:id/maintenance": "viewer",
  "PUT /api/hosts/:id/maintenance": "operator",
  "GET /api/hosts/:id/stats": "viewer",
  "GET /hosts/:id/maintenance": "viewer",
  "POST /hosts/:id/maintenance": "operator",
  "GET /api/alerts": "viewer",
  "POST /api/alerts/:id/resolve": "operator",
  "GET /alerts": "viewer",
  "POST /alerts/:id/resolve": "operator",
  "GET /hosts/:id/restore": "operator",
  "GET /hosts/:id/snapshots/:sid/restore": "operator",
  "GET /hosts/:id/restore/tree": "operator",
  "GET /hosts/:id/snapshots/:sid/download": "operator",
  "GET /api/hosts/:id/tree": "operator",
  "POST /hosts/:id/restore": "operator",
  "POST /api/hosts/:id/restore": "operator",
  "POST /hosts/:id/diff": "operator",
  "POST /api/hosts/:id/diff": "operator",
  "GET /api/openapi.json": "viewer",
  "GET /api/docs": "viewer",
  "GET /auth/sso": "public",
  "GET /auth/sso/callback": "public",
};

const BELOW: Record<Role, Role | undefined> = { viewer: undefined, operator: "viewer", admin: "operator" };

let deps: TestDeps;
beforeAll(async () => {
  deps = await createTestDeps();
});
afterAll(async () => {
  await deps.close();
});

function routeTable(app: ReturnType<typeof createApp>): Map<string, Access> {
  const table = new Map<string, Access>();
  for (const route of app.routes) {
    if (route.method === "ALL") {
      continue;
    }
    const key = `${route.method} ${route.path}`;
    const marker = (route.handler as { requiredRole?: Role }).requiredRole;
    const current = table.get(key);
    if (marker) {
      table.set(key, marker);
    } else if (!current) {
      table.set(key, "public");
    }
  }
  return table;
}

describe("route roles", () => {
  it("every route has exactly the access this table says", () => {
    const actual = Object.fromEntries(routeTable(createApp(deps)));
    expect(actual).toEqual(EXPECTED);
  });

  it("refuses each protected route without a session and with the role below", async () => {
    const signed = await signInOn(deps, {
      adminName: "walker",
      users: [
        { username: "as-viewer", role: "viewer" },
        { username: "as-operator", role: "operator" },
      ],
    });
    const clients: Partial<Record<Role, TestClient>> = {
      viewer: signed.users["as-viewer"],
      operator: signed.users["as-operator"],
    };
    for (const [key, access] of Object.entries(EXPECTED)) {
      if (access === "public") {
        continue;
      }
      const [method = "GET", pattern = "/"] = key.split(" ");
      const path = pattern.replace(/:[a-z]+/g, "01JD0000000000000000000000");
      const anonymous = signed.anonymous();
      const res = await anonymous.json(method, path, method === "GET" ? undefined : {});
      const isPage = !path.startsWith("/api/") && method === "GET";
      expect([key, res.status]).toEqual([key, isPage ? 303 : 401]);
      const below = BELOW[access];
      const client = below ? clients[below] : undefined;
      if (client) {
        const refused = await client.json(method, path, method === "GET" ? undefined : {});
        expect([key, refused.status]).toEqual([key, 403]);
      }
    }
  });
});

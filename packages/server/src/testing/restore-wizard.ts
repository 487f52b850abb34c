/**
 * @module testing/restore-wizard
 * What the restore wizard and diff tests start from: an operator signed in, host web-1 with two
 * reported snapshots (SNAP_NEW, SNAP_OLD) and a recording connection, online unless asked
 * otherwise; and the wizard's form posted as a browser posts it.
 */
import type { Database } from "@fleetback/db";
import { jobs } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { csrfFrom, type TestClient } from "./http.js";
import { createRecordingConnection, type RecordingConnection } from "./recording-connection.js";
import { seedHost } from "./seed.js";
import { startSignedInApp } from "./signed-in-app.js";
import type { TestDeps } from "./test-deps.js";

export const SNAP_OLD = "c503a2e1411551581f05e3024dc276492c1af6f7dafd51834fef527d035c3680";
export const SNAP_NEW = "b6926cf4b56e08d52e23b47ed13dc7c0f3ade7f8eabe18b3dd6ca809e77d963a";
export const SESSION = "wizard-session-0123456789";

export interface RestoreWizard {
  deps: TestDeps;
  client: TestClient;
  hostId: string;
  agent: RecordingConnection;
}

export async function startRestoreWizard(
  db: Database,
  options: { online?: boolean } = {},
): Promise<RestoreWizard> {
  const { deps, users } = await startSignedInApp({
    deps: { db },
    users: [{ username: "olga", role: "operator" }],
  });
  const client = users.olga;
  const { host } = await seedHost(deps, { name: "web-1" });
  await replaceSnapshots(deps.db, host.id, {
    refreshed_at: "2026-11-21T11:00:00Z",
    snapshots: [
      {
        id: SNAP_NEW,
        short_id: SNAP_NEW.slice(0, 8),
        time: "2026-11-21T10:00:00Z",
        hostname: "web-1",
        paths: ["/srv/lab/src/tree"],
        tags: ["daily"],
        size_bytes: 4096,
        file_count: 7,
      },
      {
        id: SNAP_OLD,
        short_id: SNAP_OLD.slice(0, 8),
        time: "2026-11-20T10:00:00Z",
        hostname: "web-1",
        paths: ["/srv/lab/src/tree"],
        tags: ["weekly"],
        size_bytes: 4000,
        file_count: 6,
      },
    ],
  });
  const agent = createRecordingConnection(host.id);
  if (options.online !== false) {
    deps.hub.register(agent);
  }
  return { deps, client, hostId: host.id, agent };
}

/** Posts the wizard form as a browser does: repeated `paths` fields, the page's CSRF token. */
export async function submitWizard(
  s: RestoreWizard,
  fields: Array<[string, string]>,
  headers: Record<string, string> = {},
) {
  const page = await s.client.request(`/hosts/${s.hostId}/snapshots/${SNAP_NEW}/restore?session=${SESSION}`);
  expect(page.status).toBe(200);
  const body = new URLSearchParams([["_csrf", csrfFrom(await page.text())], ["session", SESSION], ...fields]);
  return s.client.request(`/hosts/${s.hostId}/restore`, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Origin: new URL(s.deps.config.baseUrl).origin,
      ...headers,
    },
    body: body.toString(),
  });
}

export async function jobsOf(s: RestoreWizard) {
  return s.deps.db.select().from(jobs).where(eq(jobs.hostId, s.hostId));
}

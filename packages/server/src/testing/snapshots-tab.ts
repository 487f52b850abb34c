/**
 * @module testing/snapshots-tab
 * What the snapshots tab tests start from: a signed-in admin, an operator and a viewer signed in
 * on first use, and one host of protocol 7 online through a recording connection; plus the
 * numbered snapshots they report for it, stored as its agent's last report.
 */
import type { Database } from "@fleetback/db";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import type { TestClient } from "./http.js";
import { createRecordingConnection, type RecordingConnection } from "./recording-connection.js";
import { seedHost } from "./seed.js";
import { startSignedInApp } from "./signed-in-app.js";
import type { TestDeps } from "./test-deps.js";

export interface SnapshotsTab {
  deps: TestDeps;
  admin: TestClient;
  operator: () => Promise<TestClient>;
  viewer: () => Promise<TestClient>;
  hostId: string;
  agent: RecordingConnection;
}

/** Tests sign in up to three users (password hashing) on a shared CI machine. */
export const SLOW = 120_000;

/** Snapshot `index` of host web-1, its id the index in hex, so that a test can name it by number. */
export function snap(index: number, time: string, tags: string[] = ["srv"], paths: string[] = ["/srv"]) {
  const id = index.toString(16).padStart(64, "0");
  return {
    id,
    short_id: id.slice(-8),
    time,
    hostname: "web-1",
    paths,
    tags,
    size_bytes: 3 * 1024 * 1024,
    file_count: 1234,
  };
}
export const idOf = (index: number) => snap(index, "").id;

export async function startSnapshotsTab(db: Database): Promise<SnapshotsTab> {
  const { deps, admin, userOnDemand } = await startSignedInApp({ deps: { db } });
  const { host } = await seedHost(deps, { protocolVersion: 7 });
  const agent = createRecordingConnection(host.id);
  deps.hub.register(agent);
  return {
    deps,
    admin,
    operator: userOnDemand("olga", "operator"),
    viewer: userOnDemand("looker", "viewer"),
    hostId: host.id,
    agent,
  };
}

/**
 * Stores `snapshots` as the last list the agent of `hostId` (the tab's host unless named) reported,
 * refreshed at 10:00 on the test clock's day unless `refreshedAt` says otherwise.
 */
export async function reportSnapshots(
  tab: Pick<SnapshotsTab, "deps" | "hostId">,
  snapshots: ReturnType<typeof snap>[],
  options: { hostId?: string; refreshedAt?: string } = {},
): Promise<void> {
  await replaceSnapshots(tab.deps.db, options.hostId ?? tab.hostId, {
    snapshots,
    refreshed_at: options.refreshedAt ?? "2026-11-21T10:00:00Z",
  });
}

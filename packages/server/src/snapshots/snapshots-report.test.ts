import { createHash } from "node:crypto";
import { newMessageId, type Snapshot, type SnapshotsReportPart } from "@fleetback/protocol";
import { expect, it } from "vitest";
import { eventually } from "../testing/eventually.js";
import { readHost, seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { connectAgent, type TestAgent } from "../testing/test-agent.js";
import type { TestDeps } from "../testing/test-deps.js";
import { listSnapshots } from "./snapshot-store.js";

const FIRST_AT = Date.parse("2025-06-01T00:00:00Z");

/** A snapshot as the agent projects restic's output: hourly, a few paths, a tag. */
function realisticSnapshot(index: number): Snapshot {
  const id = createHash("sha256").update(`snapshot ${index}`).digest("hex");
  return {
    id,
    short_id: id.slice(0, 8),
    time: new Date(FIRST_AT + index * 3_600_000).toISOString(),
    hostname: "web-1",
    paths: ["/etc", "/srv/www", "/var/lib/postgresql/dumps"],
    tags: ["daily"],
    size_bytes: 1_500_000_000 + index,
    file_count: 120_000 + index,
  };
}

/** `count` snapshots newest first, cut into `parts` parts of one new report. */
function reportInParts(count: number, parts: number): { list: Snapshot[]; parts: SnapshotsReportPart[] } {
  const list = Array.from({ length: count }, (_, i) => realisticSnapshot(count - 1 - i));
  const size = Math.ceil(count / parts);
  const reportId = newMessageId();
  return {
    list,
    parts: Array.from({ length: parts }, (_, part) => ({
      snapshots: list.slice(part * size, (part + 1) * size),
      refreshed_at: "2026-11-22T03:00:00Z",
      report_id: reportId,
      part,
      parts,
    })),
  };
}

function logsOf(deps: TestDeps, hostId: string, msg: string): Array<Record<string, unknown>> {
  return deps.logLines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.host_id === hostId && entry.msg === msg);
}

/**
 * Resolves once the server has handled every frame this agent sent so far (one queue per host): a
 * dump.end nobody waits for goes through that queue and is logged as dropped. (A tree.list.result
 * no longer does: it skips the queue.)
 */
async function handledSoFar(deps: TestDeps, hostId: string, agent: TestAgent): Promise<void> {
  const id = newMessageId();
  agent.send("dump.end", { request_id: id, status: "succeeded", bytes: 0 });
  await eventually(
    () => logsOf(deps, hostId, "dump.end nobody waits for; dropped"),
    (entries) => entries.some((entry) => entry.request_id === id),
  );
}

runServerSuite("agent channel: snapshots.report", (server) => {
  it("replaces the host's cached snapshots and count with each report", async () => {
    const { host, token } = await seedHost(server.deps);
    const agent = await connectAgent(server.wsUrl, token);
    try {
      agent.hello();
      await agent.waitFor((frame) => frame.type === "schedule.set");
      const snapshot = (n: number) => ({
        id: n.toString(16).padStart(64, "0"),
        short_id: n.toString(16).padStart(8, "0"),
        time: new Date(Date.UTC(2026, 10, n)).toISOString(),
        hostname: "web-1",
        paths: ["/etc"],
        tags: ["etc"],
        size_bytes: n * 100,
        file_count: n,
      });
      agent.send("snapshots.report", {
        snapshots: [snapshot(3), snapshot(2), snapshot(1)],
        refreshed_at: "2026-11-21T12:00:00Z",
      });
      await eventually(
        async () => (await readHost(server.deps, host.id))?.snapshotCount,
        (count) => count === 3,
      );
      agent.send("snapshots.report", { snapshots: [], refreshed_at: "2026-11-21T13:00:00Z" });
      await eventually(
        async () => (await readHost(server.deps, host.id))?.snapshotsRefreshedAt?.toISOString(),
        (at) => at === "2026-11-21T13:00:00.000Z",
      );
      expect(await readHost(server.deps, host.id)).toMatchObject({ snapshotCount: 0 });
      expect(await listSnapshots(server.deps.db, host.id, { limit: 10 })).toEqual([]);
    } finally {
      await agent.close();
    }
  });

  it("replaces the cache once with all 10,000 snapshots from parts out of order, one twice", async () => {
    const { host, token } = await seedHost(server.deps);
    const agent = await connectAgent(server.wsUrl, token);
    try {
      agent.hello();
      await agent.waitFor((frame) => frame.type === "schedule.set");
      agent.send("snapshots.report", {
        snapshots: [realisticSnapshot(20_003), realisticSnapshot(20_002), realisticSnapshot(20_001)],
        refreshed_at: "2026-11-21T12:00:00Z",
      });
      const { list, parts } = reportInParts(10_000, 6);
      for (const index of [3, 0, 5, 1, 2, 3]) {
        agent.send("snapshots.report", parts[index] as SnapshotsReportPart);
      }
      await handledSoFar(server.deps, host.id, agent);
      expect(await readHost(server.deps, host.id)).toMatchObject({ snapshotCount: 3 });
      expect(logsOf(server.deps, host.id, "duplicate part of a snapshot report ignored")).toHaveLength(1);

      agent.send("snapshots.report", parts[4] as SnapshotsReportPart);
      await eventually(
        async () => (await readHost(server.deps, host.id))?.snapshotCount,
        (count) => count === 10_000,
        { timeoutMs: 30_000 },
      );
      expect((await readHost(server.deps, host.id))?.snapshotsRefreshedAt?.toISOString()).toBe(
        "2026-11-22T03:00:00.000Z",
      );
      const stored = await listSnapshots(server.deps.db, host.id, { limit: 10_001 });
      expect(stored.map((row) => row.id)).toEqual(list.map((snapshot) => snapshot.id));
      expect(stored[0]).toMatchObject({ time: new Date(list[0]?.time ?? ""), paths: list[0]?.paths });
      // One replacement for the whole report before, one for all six parts.
      expect(logsOf(server.deps, host.id, "snapshot list replaced").map((entry) => entry.count)).toEqual([
        3, 10_000,
      ]);
    } finally {
      await agent.close();
    }
  }, 60_000);

  it("leaves the old cache untouched when a report in parts never completes", async () => {
    const { host, token } = await seedHost(server.deps);
    const agent = await connectAgent(server.wsUrl, token);
    const old = [realisticSnapshot(2), realisticSnapshot(1)];
    const { parts } = reportInParts(10_000, 6);
    try {
      agent.hello();
      await agent.waitFor((frame) => frame.type === "schedule.set");
      agent.send("snapshots.report", { snapshots: old, refreshed_at: "2026-11-21T12:00:00Z" });
      for (const part of parts.slice(0, 5)) {
        agent.send("snapshots.report", part);
      }
      await handledSoFar(server.deps, host.id, agent);
    } finally {
      await agent.close();
    }
    const dropped = await eventually(
      () => logsOf(server.deps, host.id, "incomplete snapshot report dropped; cached list kept"),
      (entries) => entries.length === 1,
    );
    expect(dropped[0]).toMatchObject({ reason: "agent disconnected", received: 5, parts: 6 });

    // The missing part on the next connection starts nothing that could complete.
    const again = await connectAgent(server.wsUrl, token);
    try {
      again.hello();
      await again.waitFor((frame) => frame.type === "schedule.set");
      again.send("snapshots.report", parts[5] as SnapshotsReportPart);
      await handledSoFar(server.deps, host.id, again);
    } finally {
      await again.close();
    }
    expect(await readHost(server.deps, host.id)).toMatchObject({ snapshotCount: 2 });
    const stored = await listSnapshots(server.deps.db, host.id, { limit: 10 });
    expect(stored.map((row) => row.id)).toEqual(old.map((snapshot) => snapshot.id));
    expect(logsOf(server.deps, host.id, "snapshot list replaced")).toHaveLength(1);
  });

  it("still takes a protocol-1 agent's whole report, also after parts it superseded", async () => {
    const { host, token } = await seedHost(server.deps);
    const agent = await connectAgent(server.wsUrl, token);
    try {
      agent.hello({ protocol_version: 1 });
      await agent.waitFor((frame) => frame.type === "schedule.set");
      expect(await readHost(server.deps, host.id)).toMatchObject({ protocolVersion: 1 });
      const { parts } = reportInParts(100, 2);
      agent.send("snapshots.report", parts[0] as SnapshotsReportPart);
      const whole = [realisticSnapshot(7), realisticSnapshot(6), realisticSnapshot(5)];
      agent.send("snapshots.report", { snapshots: whole, refreshed_at: "2026-11-22T04:00:00Z" });
      // A late part of the superseded report must not complete it over the whole one.
      agent.send("snapshots.report", parts[1] as SnapshotsReportPart);
      await handledSoFar(server.deps, host.id, agent);
      expect(await readHost(server.deps, host.id)).toMatchObject({ snapshotCount: 3 });
      const stored = await listSnapshots(server.deps.db, host.id, { limit: 10 });
      expect(stored.map((row) => row.id)).toEqual(whole.map((snapshot) => snapshot.id));
    } finally {
      await agent.close();
    }
  });
});

import { expect, it } from "vitest";
import { eventually } from "../testing/eventually.js";
import { readHost, seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { connectAgent } from "../testing/test-agent.js";
import { listSnapshots } from "./snapshot-store.js";

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
});

/**
 * Issue 33, keepers: a protected host's agent never holds delete authority (not at hello, not for
 * a job), its upkeep runs on the keeper with credentials pushed for each job alone, and only the
 * keeper's reports move such a job. Real server, real WebSockets, both database engines.
 */
import { alerts, hosts, repoStats, snapshots, sourceGroups } from "@fleetback/db";
import { and, eq, isNull } from "drizzle-orm";
import { ulid } from "ulidx";
import { expect, it } from "vitest";
import { deleteHost } from "../hosts/delete-host.js";
import { forgetSnapshot } from "../maintenance/forget-snapshot.js";
import { startManualJob } from "../maintenance/maintenance-jobs.js";
import { listSnapshots, replaceSnapshots } from "../snapshots/snapshot-store.js";
import { eventually } from "../testing/eventually.js";
import { bindCredentials, readJob, seedAuditContext, seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { connectAgent, type TestAgent } from "../testing/test-agent.js";
import { setKeeper } from "./keeper-assignment.js";
import { protectionCounts } from "./protection-view.js";

const ADMIN_CANARY = "admin-canary-7f3e0c";
const MIRROR_CANARY = "mirror-canary-19ad4b";
const repo = { url: "rest:http://store.example:8000/append/web-1", username: "web-1", password: "repo-pw" };
const admin = { url: "rest:http://store.example:8001/web-1", username: "web-1", password: ADMIN_CANARY };
const mirror = { url: "rest:http://offsite.example/web-1", password: MIRROR_CANARY };

const snapshotId = (n: number) => n.toString(16).padStart(64, "0");

runServerSuite("keepers", (server) => {
  async function protectedPair() {
    const audit = await seedAuditContext(server.deps);
    const kept = await seedHost(server.deps, { name: "web-1", protocolVersion: 12 });
    const keeper = await seedHost(server.deps, { name: "store-1", protocolVersion: 12 });
    await bindCredentials(server.deps, kept.host.id, { repo, admin, mirror });
    await setKeeper(server.deps, audit, kept.host.id, keeper.host.id);
    return { audit, kept, keeper };
  }

  async function online(token: string): Promise<TestAgent> {
    const agent = await connectAgent(server.wsUrl, token);
    agent.hello();
    await agent.waitFor((frame) => frame.type === "schedule.set");
    return agent;
  }

  const seen = (agent: TestAgent) => JSON.stringify(agent.frames);

  it("refuses a keeper that is the host itself, unknown, or too old to keep", async () => {
    const audit = await seedAuditContext(server.deps);
    const { host } = await seedHost(server.deps, { name: "web-2", protocolVersion: 12 });
    const old = await seedHost(server.deps, { name: "store-old", protocolVersion: 11 });
    await expect(setKeeper(server.deps, audit, host.id, host.id)).rejects.toThrow(
      /keeper_host_id: a host cannot keep/,
    );
    await expect(setKeeper(server.deps, audit, host.id, "01NOSUCHHOST0000000000000")).rejects.toThrow(
      /keeper_host_id: no host/,
    );
    await expect(setKeeper(server.deps, audit, host.id, old.host.id)).rejects.toThrow(
      /store-old's agent speaks protocol 11; a keeper needs 12/,
    );
  });

  it("never sends a protected host its admin or mirror credentials, and clears both at hello", async () => {
    const { kept } = await protectedPair();
    const agent = await online(kept.token);
    try {
      // The initial push, up to schedule.set (auto-init's command may follow).
      expect(agent.frames.slice(0, 5).map((frame) => frame.type)).toEqual([
        "config.update",
        "config.update",
        "config.update",
        "config.update",
        "schedule.set",
      ]);
      expect(agent.frames.slice(0, 3).map((frame) => frame.payload)).toEqual([
        { slot: "repo", repository: repo },
        { slot: "admin", clear: true },
        { slot: "mirror", clear: true },
      ]);
      expect(seen(agent)).not.toContain(ADMIN_CANARY);
      expect(seen(agent)).not.toContain(MIRROR_CANARY);
    } finally {
      await agent.close();
    }
  });

  it("withdraws delete authority from a connected host the moment it becomes protected", async () => {
    const audit = await seedAuditContext(server.deps);
    const host = await seedHost(server.deps, { name: "web-3", protocolVersion: 12 });
    const keeper = await seedHost(server.deps, { name: "store-3", protocolVersion: 12 });
    await bindCredentials(server.deps, host.host.id, { repo, admin });
    const agent = await online(host.token);
    try {
      // Unprotected: today's behaviour, the admin slot at hello.
      expect(seen(agent)).toContain(ADMIN_CANARY);
      const from = agent.frames.length;
      const change = await setKeeper(server.deps, audit, host.host.id, keeper.host.id);
      expect(change.pushed).toBe(true);
      await agent.waitFor(
        (frame) => frame.type === "config.update" && "clear" in frame.payload,
        30_000,
        from,
      );
      const updates = agent.frames.slice(from).filter((frame) => frame.type === "config.update");
      expect(updates.map((frame) => frame.payload)).toEqual([
        { slot: "admin", clear: true },
        { slot: "mirror", clear: true },
      ]);
    } finally {
      await agent.close();
    }
  });

  it("runs a protected host's prune on the keeper, with the admin credentials for that job only", async () => {
    const { audit, kept, keeper } = await protectedPair();
    const host = await online(kept.token);
    const store = await online(keeper.token);
    try {
      const hostFrames = host.frames.length;
      const storeFrames = store.frames.length;
      const job = await startManualJob(server.deps, kept.host.id, "prune", audit);
      const command = await store.waitFor((frame) => frame.type === "command.run", 30_000, storeFrames);
      expect(store.frames.slice(storeFrames).map((frame) => frame.payload)).toEqual([
        { slot: "admin", repository: admin, job_id: job.id },
        { job_id: job.id, kind: "prune", requires_admin_creds: true, kept: true },
      ]);
      expect(command.payload).toMatchObject({ job_id: job.id });
      // Nothing of the prune reaches the protected host, neither its command nor credentials
      // (late hello follow-ups such as its auto-init or schedule.set may still arrive).
      expect(
        host.frames
          .slice(hostFrames)
          .filter(
            (frame) =>
              ("job_id" in frame.payload && frame.payload.job_id === job.id) ||
              (frame.type === "config.update" && frame.payload.slot === "admin"),
          ),
      ).toEqual([]);
      expect((await readJob(server.deps, job.id))?.runnerHostId).toBe(keeper.host.id);

      // The protected host cannot move the job; its reconnect does not lose it either.
      host.send("job.finished", { job_id: job.id, status: "failed", exit_code: 1, error: "forged" });
      host.send("heartbeat", { running_job_ids: [] });
      store.send("job.started", { job_id: job.id, kind: "prune", started_at: new Date().toISOString() });
      await eventually(
        async () => (await readJob(server.deps, job.id))?.status,
        (status) => status === "running",
        { what: "the keeper's job.started", timeoutMs: 30_000 },
      );
      store.send("job.finished", { job_id: job.id, status: "succeeded", exit_code: 0 });
      const done = await eventually(
        async () => readJob(server.deps, job.id),
        (row) => row?.status === "succeeded",
        { what: "the keeper's job.finished", timeoutMs: 30_000 },
      );
      expect(done?.error).toBeNull();
      const [stats] = await server.deps.db.select().from(repoStats).where(eq(repoStats.hostId, kept.host.id));
      expect(stats?.lastPruneAt).not.toBeNull();
      expect(seen(host)).not.toContain(ADMIN_CANARY);
    } finally {
      await host.close();
      await store.close();
    }
  });

  it("forgets a protected host's snapshot on the keeper and drops it from the cached list", async () => {
    const { audit, kept, keeper } = await protectedPair();
    await replaceSnapshots(server.deps.db, kept.host.id, {
      refreshed_at: new Date().toISOString(),
      snapshots: [1, 2].map((n) => ({
        id: snapshotId(n),
        short_id: snapshotId(n).slice(0, 8),
        time: new Date(Date.UTC(2026, 10, n)).toISOString(),
        hostname: "web-1",
        paths: ["/srv"],
        tags: ["web"],
        size_bytes: 0,
        file_count: 0,
      })),
    });
    const store = await online(keeper.token);
    try {
      const from = store.frames.length;
      const job = await forgetSnapshot(server.deps, kept.host.id, snapshotId(1), audit);
      const command = await store.waitFor((frame) => frame.type === "command.run", 30_000, from);
      expect(command.payload).toMatchObject({ kind: "forget", kept: true, snapshot_ids: [snapshotId(1)] });
      store.send("job.finished", { job_id: job.id, status: "succeeded", exit_code: 0 });
      await eventually(
        async () => (await listSnapshots(server.deps.db, kept.host.id, { limit: 10 })).map((s) => s.id),
        (ids) => ids.length === 1,
        { what: "the forgotten snapshot gone from the cache", timeoutMs: 30_000 },
      );
      const [row] = await server.deps.db.select().from(hosts).where(eq(hosts.id, kept.host.id));
      expect(row?.snapshotCount).toBe(1);
    } finally {
      await store.close();
    }
  });

  it("forgets by the server's plan on the keeper: exact ids, and a back-dated snapshot never makes a good one go", async () => {
    const { audit, kept, keeper } = await protectedPair();
    const now = server.deps.clock.now().getTime();
    const day = 86_400_000;
    // Real backups today and three, four and five days ago; a fake one made today claims two days
    // ago (past the 36 h a real backup's start may lie before the server sees it).
    const made = [
      { n: 11, at: now - 60_000 },
      { n: 12, at: now - 3 * day },
      { n: 13, at: now - 4 * day },
      { n: 14, at: now - 5 * day },
      { n: 15, at: now - 2 * day, fake: true },
    ];
    await replaceSnapshots(server.deps.db, kept.host.id, {
      refreshed_at: new Date(now).toISOString(),
      snapshots: made.map(({ n, at }) => ({
        id: snapshotId(n),
        short_id: snapshotId(n).slice(0, 8),
        time: new Date(at).toISOString(),
        hostname: "web-1",
        paths: ["/srv"],
        tags: ["web"],
        size_bytes: 0,
        file_count: 0,
      })),
    });
    for (const { n, at, fake } of made) {
      const firstSeen = new Date(fake ? now : at + 60_000);
      await server.deps.db
        .update(snapshots)
        .set({ firstSeenAt: firstSeen })
        .where(and(eq(snapshots.hostId, kept.host.id), eq(snapshots.id, snapshotId(n))));
    }
    await server.deps.db.insert(sourceGroups).values({
      id: ulid(),
      hostId: kept.host.id,
      name: "web",
      includes: ["/srv"],
      retentionPolicy: { daily: 3 },
    });
    const store = await online(keeper.token);
    try {
      const from = store.frames.length;
      const job = await startManualJob(server.deps, kept.host.id, "forget", audit);
      const command = await store.waitFor((frame) => frame.type === "command.run", 30_000, from);
      // daily 3 keeps today, three and four days ago; the fake neither takes a day nor goes.
      expect(command.payload).toMatchObject({
        kind: "forget",
        kept: true,
        forget_groups: [],
        snapshot_ids: [snapshotId(14)],
      });
      const plan = (await readJob(server.deps, job.id))?.params.retention_plan as {
        groups: {
          tag: string;
          keep: { id: string; reasons: string[] }[];
          remove: string[];
          suspect: { id: string }[];
        }[];
        remove_total: number;
      };
      expect(plan.remove_total).toBe(1);
      expect(plan.groups).toHaveLength(1);
      expect(plan.groups[0]?.keep.map((entry) => entry.id)).toEqual([
        snapshotId(11),
        snapshotId(12),
        snapshotId(13),
      ]);
      expect(plan.groups[0]?.keep[0]?.reasons).toContain("daily snapshot");
      expect(plan.groups[0]?.suspect.map((entry) => entry.id)).toEqual([snapshotId(15)]);
      const [alert] = await server.deps.db
        .select()
        .from(alerts)
        .where(
          and(
            eq(alerts.hostId, kept.host.id),
            eq(alerts.kind, "snapshot_time_suspect"),
            isNull(alerts.resolvedAt),
          ),
        );
      expect(alert?.message).toContain(snapshotId(15).slice(0, 8));
      // Nothing left to remove: a second run says so and starts nothing.
      store.send("job.finished", { job_id: job.id, status: "succeeded", exit_code: 0 });
      await eventually(
        async () => (await listSnapshots(server.deps.db, kept.host.id, { limit: 10 })).map((row) => row.id),
        (ids) => !ids.includes(snapshotId(14)),
        { what: "the planned forget recorded", timeoutMs: 30_000 },
      );
      await expect(startManualJob(server.deps, kept.host.id, "forget", audit)).rejects.toThrow(
        /remove no snapshot of this host now/,
      );
    } finally {
      await store.close();
    }
  });

  it("answers an offline keeper with a sentence naming it, and refuses deleting a keeper that keeps", async () => {
    const { audit, kept, keeper } = await protectedPair();
    const host = await online(kept.token);
    try {
      await expect(startManualJob(server.deps, kept.host.id, "prune", audit)).rejects.toThrow(
        /keeper that maintains this host's repository is offline/,
      );
      await expect(deleteHost(server.deps, audit, keeper.host.id)).rejects.toThrow(
        /keeps the repositories of web-1; give them another keeper/,
      );
    } finally {
      await host.close();
    }
  });

  it("counts the fleet's exposure", async () => {
    const before = await protectionCounts(server.deps.db);
    await protectedPair();
    const after = await protectionCounts(server.deps.db);
    expect(after.hosts - before.hosts).toBe(2);
    expect(after.protected - before.protected).toBe(1);
    expect(after.unprotected - before.unprotected).toBe(1);
  });
});

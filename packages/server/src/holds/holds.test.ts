/**
 * Issue 33, deletion holds: a forget the server plans that would remove more than the set share of
 * a group waits for an admin, whose release runs exactly the held plan on the keeper; any open
 * hold stops every forget and prune of the host, whoever starts it, until an admin releases it
 * with a reason. Real server, real WebSockets, both database engines.
 */
import { alerts, auditLog, deletionHolds, snapshots, sourceGroups } from "@fleetback/db";
import { and, eq, isNull } from "drizzle-orm";
import { ulid } from "ulidx";
import { expect, it } from "vitest";
import { setKeeper } from "../keepers/keeper-assignment.js";
import { keeperCandidates } from "../keepers/protection-view.js";
import { forgetSnapshot } from "../maintenance/forget-snapshot.js";
import { startManualJob } from "../maintenance/maintenance-jobs.js";
import { releaseHold } from "../maintenance/release-hold.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { bindCredentials, seedAuditContext, seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { connectAgent, type TestAgent } from "../testing/test-agent.js";
import { openHold, openHoldsOf } from "./deletion-holds.js";

const repo = { url: "rest:http://store.example:8000/append/web-1", username: "web-1", password: "repo-pw" };
const admin = { url: "rest:http://store.example:8001/web-1", username: "web-1", password: "admin-pw" };
const snapshotId = (n: number) => n.toString(16).padStart(64, "0");

runServerSuite("deletion holds", (server) => {
  async function protectedHost(snapshotCount: number) {
    const audit = await seedAuditContext(server.deps);
    const kept = await seedHost(server.deps, { name: "web-1", protocolVersion: 12 });
    const keeper = await seedHost(server.deps, { name: "store-1", protocolVersion: 12 });
    await bindCredentials(server.deps, kept.host.id, { repo, admin });
    await setKeeper(server.deps, audit, kept.host.id, keeper.host.id);
    const now = server.deps.clock.now().getTime();
    await replaceSnapshots(server.deps.db, kept.host.id, {
      refreshed_at: new Date(now).toISOString(),
      snapshots: Array.from({ length: snapshotCount }, (_, i) => ({
        id: snapshotId(i + 1),
        short_id: snapshotId(i + 1).slice(0, 8),
        time: new Date(now - i * 3_600_000).toISOString(),
        hostname: "web-1",
        paths: ["/srv"],
        tags: ["web"],
        size_bytes: 0,
        file_count: 0,
      })),
    });
    // Every snapshot first seen when it was made: none is suspect.
    await server.deps.db
      .update(snapshots)
      .set({ firstSeenAt: new Date(now) })
      .where(eq(snapshots.hostId, kept.host.id));
    await server.deps.db.insert(sourceGroups).values({
      id: ulid(),
      hostId: kept.host.id,
      name: "web",
      includes: ["/srv"],
      retentionPolicy: { last: 1 },
    });
    return { audit, kept, keeper };
  }

  async function online(token: string): Promise<TestAgent> {
    const agent = await connectAgent(server.wsUrl, token);
    agent.hello();
    await agent.waitFor((frame) => frame.type === "schedule.set", 30_000);
    return agent;
  }

  const openAlert = async (hostId: string, kind: string) =>
    (
      await server.deps.db
        .select()
        .from(alerts)
        .where(and(eq(alerts.hostId, hostId), eq(alerts.kind, kind), isNull(alerts.resolvedAt)))
    )[0];

  it("holds a forget that would remove most of a group until an admin approves exactly that plan", async () => {
    const { audit, kept, keeper } = await protectedHost(6);
    const store = await online(keeper.token);
    try {
      const from = store.frames.length;
      await expect(startManualJob(server.deps, kept.host.id, "forget", audit)).rejects.toThrow(
        /would forget 5 of the 6 snapshots of group web \(more than 50%\); it waits for an admin/,
      );
      const [hold] = await openHoldsOf(server.deps.db, kept.host.id);
      expect(hold?.kind).toBe("large_forget");
      expect(hold?.details.snapshot_ids).toEqual([2, 3, 4, 5, 6].map(snapshotId));
      expect((await openAlert(kept.host.id, "forget_plan_held"))?.message).toContain("5 of the 6");
      // Held: nothing went to the keeper, and prune waits too.
      await expect(startManualJob(server.deps, kept.host.id, "prune", audit)).rejects.toThrow(
        /held until an admin/,
      );
      expect(store.frames.slice(from).filter((frame) => frame.type === "command.run")).toEqual([]);

      await expect(releaseHold(server.deps, audit, kept.host.id, hold?.id ?? "", "  ")).rejects.toThrow(
        /reason:/,
      );
      const released = await releaseHold(
        server.deps,
        audit,
        kept.host.id,
        hold?.id ?? "",
        "policy lowered on purpose",
      );
      const command = await store.waitFor((frame) => frame.type === "command.run", 30_000, from);
      expect(command.payload).toMatchObject({
        job_id: released.jobId,
        kind: "forget",
        kept: true,
        snapshot_ids: [2, 3, 4, 5, 6].map(snapshotId),
      });
      expect(await openHoldsOf(server.deps.db, kept.host.id)).toEqual([]);
      expect(await openAlert(kept.host.id, "forget_plan_held")).toBeUndefined();
      const [entry] = await server.deps.db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.targetId, kept.host.id), eq(auditLog.action, "host.deletion_hold.release")));
      expect(entry?.details).toMatchObject({ reason: "policy lowered on purpose", kind: "large_forget" });
    } finally {
      await store.close();
    }
  });

  it("keeps an approval from taking when the keeper is away: the hold stays", async () => {
    const { audit, kept, keeper } = await protectedHost(6);
    const store = await online(keeper.token);
    await expect(startManualJob(server.deps, kept.host.id, "forget", audit)).rejects.toThrow(
      /waits for an admin/,
    );
    await store.close();
    const [hold] = await openHoldsOf(server.deps.db, kept.host.id);
    await expect(releaseHold(server.deps, audit, kept.host.id, hold?.id ?? "", "go")).rejects.toThrow(
      /could not start .*; the hold stays/,
    );
    expect((await openHoldsOf(server.deps.db, kept.host.id)).map((row) => row.id)).toEqual([hold?.id]);
  });

  it("stops every forget and prune of a host with an anomaly hold, for any host, until released", async () => {
    const audit = await seedAuditContext(server.deps);
    const { host, token } = await seedHost(server.deps, { name: "web-9", protocolVersion: 12 });
    await bindCredentials(server.deps, host.id, { repo, admin: repo });
    await replaceSnapshots(server.deps.db, host.id, {
      refreshed_at: new Date().toISOString(),
      snapshots: [
        {
          id: snapshotId(1),
          short_id: "00000000",
          time: new Date().toISOString(),
          hostname: "web-9",
          paths: ["/srv"],
          tags: ["web"],
          size_bytes: 0,
          file_count: 0,
        },
      ],
    });
    const agent = await online(token);
    try {
      const { hold, opened } = await openHold(
        server.deps,
        { hostId: host.id, kind: "backup_anomaly", reason: "92% of the files changed", details: {} },
        server.deps.clock.now(),
      );
      expect(opened).toBe(true);
      expect((await openAlert(host.id, "backup_anomaly"))?.message).toContain("92% of the files changed");
      const from = agent.frames.length;
      await expect(startManualJob(server.deps, host.id, "prune", audit)).rejects.toThrow(
        /held until an admin/,
      );
      await expect(forgetSnapshot(server.deps, host.id, snapshotId(1), audit)).rejects.toThrow(
        /held until an admin/,
      );
      // (auto-init's init may come: it deletes nothing)
      const deleting = agent.frames
        .slice(from)
        .filter(
          (frame) =>
            frame.type === "command.run" &&
            ["forget", "prune"].includes((frame.payload as { kind: string }).kind),
        );
      expect(deleting).toEqual([]);
      // A second anomaly leaves the first hold as it was.
      expect(
        (
          await openHold(
            server.deps,
            { hostId: host.id, kind: "backup_anomaly", reason: "again", details: {} },
            server.deps.clock.now(),
          )
        ).opened,
      ).toBe(false);

      await releaseHold(server.deps, audit, host.id, hold.id, "the developers rewrote the tree on purpose");
      expect(await openAlert(host.id, "backup_anomaly")).toBeUndefined();
      const job = await startManualJob(server.deps, host.id, "prune", audit);
      await agent.waitFor(
        (frame) => frame.type === "command.run" && (frame.payload as { job_id: string }).job_id === job.id,
        30_000,
        from,
      );
      const [row] = await server.deps.db.select().from(deletionHolds).where(eq(deletionHolds.id, hold.id));
      expect(row?.releaseReason).toBe("the developers rewrote the tree on purpose");
      expect(row?.releasedBy).toBe(audit.actor.userId);
    } finally {
      await agent.close();
    }
  });

  it("offers only agents that can keep as keepers", async () => {
    const { host } = await seedHost(server.deps, { name: "web-8", protocolVersion: 12 });
    const old = await seedHost(server.deps, { name: "store-old-8", protocolVersion: 11 });
    const ids = (await keeperCandidates(server.deps.db, host.id)).map((candidate) => candidate.id);
    expect(ids).not.toContain(host.id);
    expect(ids).not.toContain(old.host.id);
  });
});

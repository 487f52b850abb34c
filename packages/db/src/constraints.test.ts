import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import type { Database } from "./database.js";
import { isCheckViolation, isForeignKeyViolation, isUniqueViolation } from "./errors.js";
import {
  alerts,
  hostCredentials,
  hosts,
  jobs,
  notificationChannels,
  notificationDeliveries,
  pendingHosts,
  scheduleSourceGroups,
  schedules,
  snapshots,
  sourceGroups,
} from "./schema/index.js";
import {
  insertAlert,
  insertHost,
  insertJob,
  insertSchedule,
  insertSourceGroup,
  testId,
} from "./test-support/fixtures.js";
import { runDbSuite } from "./testing/db-suite.js";

/** A source group of the host (a new one by default) and a schedule that fires it. */
async function insertFiredGroup(db: Database, hostId?: string) {
  const host = hostId ?? (await insertHost(db)).id;
  const group = await insertSourceGroup(db, host);
  const schedule = await insertSchedule(db, host);
  await db.insert(scheduleSourceGroups).values({ scheduleId: schedule.id, sourceGroupId: group.id });
  return { group, schedule };
}

runDbSuite("database constraints", (getDb) => {
  it("rejects a second source group of the same name on one host, allows it on another", async () => {
    const db = getDb();
    const a = await insertHost(db);
    const b = await insertHost(db, { name: "web-2" });
    await insertSourceGroup(db, a.id, { name: "etc" });

    const error = await insertSourceGroup(db, a.id, { name: "etc" }).catch((e: unknown) => e);
    expect(isUniqueViolation(error, "source_groups_host_id_name_key")).toBe(true);
    await expect(insertSourceGroup(db, b.id, { name: "etc" })).resolves.toMatchObject({ name: "etc" });
  });

  it("allows one open alert per (host, kind, dedup_key) beside resolved ones and other keys", async () => {
    const db = getDb();
    const host = await insertHost(db);
    const alert = { hostId: host.id, kind: "backup_failed", dedupKey: "group-1", message: "failed" };

    await db.insert(alerts).values({ ...alert, id: testId("alert"), resolvedAt: new Date() });
    await db.insert(alerts).values({ ...alert, id: testId("alert") });
    const error = await db
      .insert(alerts)
      .values({ ...alert, id: testId("alert") })
      .catch((e: unknown) => e);
    expect(isUniqueViolation(error, "alerts_open_key")).toBe(true);

    await db.insert(alerts).values({ ...alert, id: testId("alert"), dedupKey: "group-2" });
    await db.insert(alerts).values({ ...alert, id: testId("alert"), kind: "check_failed", dedupKey: "" });
    const open = await db.select().from(alerts).where(eq(alerts.hostId, host.id));
    expect(open.filter((row) => row.resolvedAt === null)).toHaveLength(3);
  });

  it("defaults an alert's dedup_key to the empty string", async () => {
    const db = getDb();
    const host = await insertHost(db);
    const row = await insertAlert(db, host.id, { kind: "prune_failed", message: "m" });
    expect(row.dedupKey).toBe("");
  });

  it("keeps a job but clears its source_group_id when the group is deleted", async () => {
    const db = getDb();
    const host = await insertHost(db);
    const group = await insertSourceGroup(db, host.id);
    const job = await insertJob(db, host.id, { sourceGroupId: group.id });

    await db.delete(sourceGroups).where(eq(sourceGroups.id, group.id));
    const [after] = await db.select().from(jobs).where(eq(jobs.id, job.id));
    expect(after?.sourceGroupId).toBeNull();
  });

  it("keeps a job but clears its scheduled_id when the schedule is deleted", async () => {
    const db = getDb();
    const host = await insertHost(db);
    const schedule = await insertSchedule(db, host.id);
    const job = await insertJob(db, host.id, { actorKind: "schedule", scheduledId: schedule.id });

    await db.delete(schedules).where(eq(schedules.id, schedule.id));
    const [after] = await db.select().from(jobs).where(eq(jobs.id, job.id));
    expect(after?.scheduledId).toBeNull();
    expect(after?.actorKind).toBe("schedule");
  });

  it("removes credentials, groups, schedules, jobs and snapshots with their host", async () => {
    const db = getDb();
    const host = await insertHost(db);
    const other = await insertHost(db, { name: "other" });
    await db.insert(hostCredentials).values({ hostId: host.id, repoSealed: new Uint8Array([1, 2, 3]) });
    const { group } = await insertFiredGroup(db, host.id);
    await insertJob(db, host.id, { sourceGroupId: group.id });
    await insertJob(db, other.id);
    const snapshot = { shortId: "abcd1234", time: new Date(), hostname: "web-1" };
    await db.insert(snapshots).values({ ...snapshot, hostId: host.id, id: "abcd1234ef" });
    await db.insert(snapshots).values({ ...snapshot, hostId: other.id, id: "abcd1234ef" });

    await db.delete(hosts).where(eq(hosts.id, host.id));

    expect(await db.select().from(hostCredentials)).toEqual([]);
    expect(await db.select().from(sourceGroups)).toEqual([]);
    expect(await db.select().from(schedules)).toEqual([]);
    expect(await db.select().from(scheduleSourceGroups)).toEqual([]);
    expect((await db.select().from(jobs)).map((j) => j.hostId)).toEqual([other.id]);
    expect((await db.select().from(snapshots)).map((s) => s.hostId)).toEqual([other.id]);
  });

  it("refuses to delete a source group a schedule still fires", async () => {
    const db = getDb();
    const { group, schedule } = await insertFiredGroup(db);

    const error = await db
      .delete(sourceGroups)
      .where(eq(sourceGroups.id, group.id))
      .catch((e: unknown) => e);
    expect(isForeignKeyViolation(error)).toBe(true);

    await db.delete(schedules).where(eq(schedules.id, schedule.id));
    await db.delete(sourceGroups).where(eq(sourceGroups.id, group.id));
    expect(await db.select().from(sourceGroups)).toEqual([]);
  });

  it("refuses the group deletion at commit inside a transaction, leaving the group in place", async () => {
    const db = getDb();
    const { group } = await insertFiredGroup(db);

    const error = await db
      .transaction(async (tx) => {
        await tx.delete(sourceGroups).where(eq(sourceGroups.id, group.id));
      })
      .catch((e: unknown) => e);
    expect(isForeignKeyViolation(error, "schedule_source_groups_source_group_id_fkey")).toBe(true);
    expect(await db.select().from(sourceGroups)).toHaveLength(1);
  });

  it("accepts only 32-byte public keys for pending hosts", async () => {
    const db = getDb();
    const pending = (publicKey: Uint8Array) => ({
      id: testId("pending"),
      hostname: "new-host",
      os: "linux",
      arch: "arm64",
      agentVersion: "0.1.0",
      publicKey,
      fingerprint: "SHA256:x",
      expiresAt: new Date(Date.now() + 3_600_000),
    });

    const [row] = await db
      .insert(pendingHosts)
      .values(pending(new Uint8Array(32).fill(7)))
      .returning();
    expect(row?.publicKey).toEqual(new Uint8Array(32).fill(7));
    for (const size of [31, 33, 0]) {
      const error = await db
        .insert(pendingHosts)
        .values(pending(new Uint8Array(size)))
        .catch((e: unknown) => e);
      expect(isCheckViolation(error, "pending_hosts_public_key_check")).toBe(true);
    }
  });

  it("rejects unknown job kinds, statuses and actor kinds", async () => {
    const db = getDb();
    const host = await insertHost(db);
    for (const fields of [{ kind: "snapshot" }, { status: "canceled" }, { actorKind: "agent" }] as const) {
      // Bypasses the TypeScript literal types on purpose: the database is the last line.
      const error = await insertJob(db, host.id, fields as unknown as Parameters<typeof insertJob>[2]).catch(
        (e: unknown) => e,
      );
      expect(isCheckViolation(error)).toBe(true);
    }
  });

  it("rejects zero or negative bandwidth caps and allows no cap", async () => {
    const db = getDb();
    await expect(insertHost(db, { bandwidthUpKbps: null, bandwidthDownKbps: 2048 })).resolves.toMatchObject({
      bandwidthUpKbps: null,
      bandwidthDownKbps: 2048,
    });
    const error = await insertHost(db, { bandwidthUpKbps: 0 }).catch((e: unknown) => e);
    expect(isCheckViolation(error, "hosts_bandwidth_up_kbps_check")).toBe(true);
  });

  it("keeps agent kind and update state to their sets, and update version and state together", async () => {
    const db = getDb();
    const kind = await insertHost(db, { agentKind: "docker" as "sea" }).catch((e: unknown) => e);
    expect(isCheckViolation(kind, "hosts_agent_kind_check")).toBe(true);
    const state = await insertHost(db, { updateVersion: "1.0.0", updateState: "done" as "sent" }).catch(
      (e: unknown) => e,
    );
    expect(isCheckViolation(state, "hosts_update_state_check")).toBe(true);
    const half = await insertHost(db, { updateVersion: "1.0.0" }).catch((e: unknown) => e);
    expect(isCheckViolation(half, "hosts_update_pair_check")).toBe(true);
    await expect(
      insertHost(db, { agentKind: "sea", updateVersion: "1.0.0", updateState: "rolled_back" }),
    ).resolves.toMatchObject({ agentKind: "sea", updateState: "rolled_back" });
    await expect(insertHost(db)).resolves.toMatchObject({ agentKind: "bundle", updateState: null });
  });

  it("drops pending deliveries with their channel, keeps them without their alert, knows two events", async () => {
    const db = getDb();
    const host = await insertHost(db);
    const alert = await insertAlert(db, host.id);
    const channel = (name: string) => ({
      id: testId("channel"),
      name,
      kind: "slack" as const,
      sealedConfig: new Uint8Array([1, 2, 3]),
    });
    const kept = channel("kept");
    const dropped = channel("dropped");
    await db.insert(notificationChannels).values([kept, dropped]);
    const delivery = (channelId: string) => ({
      id: testId("delivery"),
      channelId,
      alertId: alert.id,
      event: "alert.opened" as const,
      notification: { title: "t", body: "b", link: "https://fleetback.example/hosts/1", data: {} },
      nextAttemptAt: new Date(),
    });
    await db.insert(notificationDeliveries).values([delivery(kept.id), delivery(dropped.id)]);

    await db.delete(notificationChannels).where(eq(notificationChannels.id, dropped.id));
    await db.delete(hosts).where(eq(hosts.id, host.id));
    expect(await db.select().from(notificationDeliveries)).toMatchObject([
      { channelId: kept.id, alertId: null, attempts: 0, claimedUntil: null },
    ]);

    for (const fields of [{ event: "test" }, { attempts: -1 }]) {
      const error = await db
        .insert(notificationDeliveries)
        .values({ ...delivery(kept.id), ...(fields as { attempts: number }) })
        .catch((e: unknown) => e);
      expect(isCheckViolation(error)).toBe(true);
    }
  });
});

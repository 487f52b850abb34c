import { alerts, maintenance } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { and, eq, isNull } from "drizzle-orm";
import { expect, it } from "vitest";
import { applyRepoStats } from "../snapshots/repo-stats.js";
import { deleteSchedule } from "../sources/schedules.js";
import {
  createRecordingNotifier,
  reportSnapshots,
  seedScheduledGroup,
  setHostStatus,
} from "../testing/health-test-support.js";
import { seedHost } from "../testing/seed.js";
import { createTestDeps } from "../testing/test-deps.js";
import { healthTick, resolveAgentOffline } from "./health-alerts.js";

runDbSuite("health alerts", (getDb) => {
  async function setup(config: { agentOfflineAlertAfterMs?: number | null } = {}) {
    const deps = await createTestDeps({ db: getDb(), config });
    const notifier = createRecordingNotifier();
    const health = { ...deps, notifier };
    const tick = () => healthTick(health, deps.clock.now());
    const moveTo = (iso: string) => deps.clock.advance(new Date(iso).getTime() - deps.clock.now().getTime());
    const open = async () =>
      (await deps.db.select().from(alerts).where(isNull(alerts.resolvedAt))).map((a) => [a.kind, a.dedupKey]);
    return { deps, notifier, tick, moveTo, open };
  }

  it("opens backup_overdue once per group, notifies it, and resolves it when a snapshot arrives", async () => {
    const { deps, notifier, tick, moveTo, open } = await setup();
    const { host, group } = await seedScheduledGroup(deps, { hostName: "db-1", cron: "0 * * * *" });
    await setHostStatus(deps, host.id, "online", deps.clock.now());
    await reportSnapshots(deps, host.id, [{ time: "2026-11-21T12:00:00Z", tags: ["etc"] }]);
    moveTo("2026-11-21T13:30:00Z");
    expect(await tick()).toMatchObject({ ran: true, opened: [], resolved: [] });
    moveTo("2026-11-21T14:00:00Z");
    expect((await tick()).opened).toEqual([{ hostId: host.id, kind: "backup_overdue", dedupKey: group.id }]);
    expect(notifier.notices).toEqual([
      {
        event: "opened",
        kind: "backup_overdue",
        hostName: "db-1",
        group: "etc",
        body: "No snapshot of etc since 2026-11-21T12:00:00Z; it was due by 2026-11-21T14:00:00Z",
      },
    ]);
    // Still overdue an hour later: the same alert, no second notification.
    moveTo("2026-11-21T15:00:00Z");
    expect(await tick()).toMatchObject({ opened: [], resolved: [] });
    expect(await open()).toEqual([["backup_overdue", group.id]]);
    await reportSnapshots(deps, host.id, [{ time: "2026-11-21T15:00:30Z", tags: ["etc"] }]);
    expect((await tick()).resolved).toEqual([
      { hostId: host.id, kind: "backup_overdue", dedupKey: group.id },
    ]);
    expect(notifier.notices.at(-1)).toMatchObject({
      event: "resolved",
      kind: "backup_overdue",
      hostName: "db-1",
    });
    expect(await open()).toEqual([]);
    await deps.close();
  });

  it("counts a grace shorter than the interval from the due time: good runs never go overdue", async () => {
    const { deps, notifier, tick, moveTo, open } = await setup();
    const { host, group } = await seedScheduledGroup(deps, { cron: "*/3 * * * *", graceSeconds: 60 });
    const second = 1000;
    const start = deps.clock.now().getTime();
    // Every run from 12:03 to 12:30 lands its snapshot 20 s after the fire; the health check looks
    // every 30 s, so it sees each gap between two good runs.
    for (let at = start + 30 * second; at <= start + (30 * 60 + 30) * second; at += 30 * second) {
      moveTo(new Date(at).toISOString());
      const sinceFire = (at - start) % (180 * second);
      if (sinceFire === 30 * second) {
        await reportSnapshots(deps, host.id, [
          { time: new Date(at - 10 * second).toISOString(), tags: ["etc"] },
        ]);
      }
      await setHostStatus(deps, host.id, "online", deps.clock.now());
      expect((await tick()).opened).toEqual([]);
    }
    expect(notifier.notices).toEqual([]);
    // The 12:33 run does not happen: overdue exactly its grace after it was due, not before.
    moveTo("2026-11-21T12:33:59Z");
    expect((await tick()).opened).toEqual([]);
    moveTo("2026-11-21T12:34:00Z");
    expect((await tick()).opened).toEqual([{ hostId: host.id, kind: "backup_overdue", dedupKey: group.id }]);
    expect(notifier.notices).toEqual([
      expect.objectContaining({
        kind: "backup_overdue",
        body: "No snapshot of etc since 2026-11-21T12:30:20Z; it was due by 2026-11-21T12:34:00Z",
      }),
    ]);
    expect(await open()).toEqual([["backup_overdue", group.id]]);
    await deps.close();
  });

  it("resolves backup_overdue when the group's schedule is deleted, and never opens one for it again", async () => {
    const { deps, tick, moveTo, open } = await setup();
    const { host, group, schedule, audit } = await seedScheduledGroup(deps);
    await setHostStatus(deps, host.id, "online", deps.clock.now());
    moveTo("2026-11-21T14:00:00Z");
    await tick();
    expect(await open()).toEqual([["backup_overdue", group.id]]);
    await deleteSchedule(deps, audit, host.id, schedule.id);
    expect((await tick()).resolved).toHaveLength(1);
    moveTo("2026-11-25T14:00:00Z");
    await setHostStatus(deps, host.id, "online", deps.clock.now());
    expect(await tick()).toMatchObject({ opened: [], resolved: [] });
    await deps.close();
  });

  it("opens agent_offline after the setting, and resolves it on hello or at the next tick", async () => {
    const { deps, notifier, tick, moveTo, open } = await setup({ agentOfflineAlertAfterMs: 3_600_000 });
    const { host } = await seedHost(deps, { name: "laptop", createdAt: deps.clock.now() });
    await setHostStatus(deps, host.id, "offline", new Date("2026-11-21T11:30:00Z"));
    expect((await tick()).opened).toEqual([]);
    moveTo("2026-11-21T12:30:00Z");
    expect((await tick()).opened).toEqual([{ hostId: host.id, kind: "agent_offline", dedupKey: "" }]);
    expect(notifier.notices.at(-1)?.body).toBe(
      "The agent of laptop has been offline since 2026-11-21T11:30:00Z",
    );
    await resolveAgentOffline({ ...deps, notifier }, { id: host.id, name: "laptop" }, deps.clock.now());
    expect(await open()).toEqual([]);
    expect(notifier.notices.at(-1)).toMatchObject({
      event: "resolved",
      body: "Resolved: the agent is connected again.",
    });
    // Offline again, then back online before a hello reached this code: the tick resolves it.
    moveTo("2026-11-21T14:00:00Z");
    await tick();
    expect(await open()).toEqual([["agent_offline", ""]]);
    await setHostStatus(deps, host.id, "online", deps.clock.now());
    expect((await tick()).resolved).toEqual([{ hostId: host.id, kind: "agent_offline", dedupKey: "" }]);
    await deps.close();
  });

  it("raises no agent_offline when the setting is off", async () => {
    const { deps, tick, moveTo } = await setup({ agentOfflineAlertAfterMs: null });
    await seedHost(deps, { name: "laptop", createdAt: deps.clock.now() });
    moveTo("2026-11-30T12:00:00Z");
    expect((await tick()).opened).toEqual([]);
    await deps.close();
  });

  it("opens check_overdue without a successful check within twice the cadence, resolves on an ok check", async () => {
    const { deps, tick, moveTo, open } = await setup();
    const { host } = await seedHost(deps, { name: "nas", status: "online", lastSeenAt: deps.clock.now() });
    await deps.db.insert(maintenance).values({
      hostId: host.id,
      checkCron: "0 5 * * *",
      createdAt: deps.clock.now(),
      updatedAt: deps.clock.now(),
    });
    const keepOnline = () => setHostStatus(deps, host.id, "online", deps.clock.now());
    await applyRepoStats(
      deps.db,
      host.id,
      { last_check_status: "ok", last_check_at: "2026-11-21T05:10:00Z" },
      deps.clock.now(),
    );
    // A failed check does not count as one: twice the daily cadence after the last good one.
    await applyRepoStats(
      deps.db,
      host.id,
      { last_check_status: "errors", last_check_at: "2026-11-22T05:10:00Z" },
      deps.clock.now(),
    );
    moveTo("2026-11-23T05:10:00Z");
    await keepOnline();
    expect((await tick()).opened).toEqual([]);
    moveTo("2026-11-23T05:11:00Z");
    await keepOnline();
    expect((await tick()).opened).toEqual([{ hostId: host.id, kind: "check_overdue", dedupKey: "" }]);
    const [row] = await deps.db
      .select()
      .from(alerts)
      .where(and(eq(alerts.kind, "check_overdue")));
    expect(row?.message).toBe(
      'No successful repository check of nas since 2026-11-21T05:10:00Z (checks run on "0 5 * * *")',
    );
    await applyRepoStats(
      deps.db,
      host.id,
      { last_check_status: "ok", last_check_at: "2026-11-23T05:20:00Z" },
      deps.clock.now(),
    );
    expect((await tick()).resolved).toHaveLength(1);
    // Checks turned off: nothing is overdue any more.
    moveTo("2026-12-10T00:00:00Z");
    await keepOnline();
    await deps.db.update(maintenance).set({ checkEnabled: false }).where(eq(maintenance.hostId, host.id));
    expect((await tick()).opened).toEqual([]);
    expect(await open()).toEqual([]);
    await deps.close();
  });

  it("lets one replica evaluate at a time: a tick that meets the lock writes nothing", async () => {
    const { deps, notifier } = await setup();
    const { host } = await seedScheduledGroup(deps);
    await setHostStatus(deps, host.id, "online", new Date("2026-11-21T15:00:00Z"));
    const at = new Date("2026-11-21T15:00:00Z");
    const [first, second] = await Promise.all([
      healthTick({ ...deps, notifier }, at),
      healthTick({ ...deps, notifier }, at),
    ]);
    const opened = [...first.opened, ...second.opened];
    expect(opened).toHaveLength(1);
    expect(notifier.notices).toHaveLength(1);
    await deps.close();
  });
});

import { snapshotTags } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { expect, it } from "vitest";
import { deleteSchedule } from "../sources/schedules.js";
import { reportSnapshots, seedScheduledGroup } from "../testing/health-test-support.js";
import { createTestDeps } from "../testing/test-deps.js";
import { evaluateFreshness } from "./freshness.js";

runDbSuite("group freshness", (getDb) => {
  // The test clock starts at 2026-11-21T12:00:00Z.
  const setup = async () => createTestDeps({ db: getDb() });
  const moveTo = (deps: Awaited<ReturnType<typeof setup>>, iso: string) =>
    deps.clock.advance(new Date(iso).getTime() - deps.clock.now().getTime());

  it("follows never → overdue → fresh from the reported snapshots of the group's tag", async () => {
    const deps = await setup();
    const { host, group } = await seedScheduledGroup(deps, { cron: "0 * * * *" });
    const judge = async () => {
      const [only] = await evaluateFreshness(deps.db, deps.clock.now(), {
        defaultTimeZone: "UTC",
        hostId: host.id,
      });
      return only;
    };
    // No snapshot yet: never backed up, judged from when the group became scheduled (12:00): due at
    // 13:00, overdue at 14:00.
    expect(await judge()).toMatchObject({ groupId: group.id, state: "never", lastSnapshotAt: null });
    moveTo(deps, "2026-11-21T13:10:00Z");
    expect((await judge())?.state).toBe("never");
    // A snapshot of another tag, or untagged, does not count.
    await reportSnapshots(deps, host.id, [
      { time: "2026-11-21T13:05:00Z", tags: ["home"] },
      { time: "2026-11-21T13:06:00Z", tags: [] },
    ]);
    moveTo(deps, "2026-11-21T14:00:00Z");
    expect(await judge()).toMatchObject({ state: "overdue", lastSnapshotAt: null, overdueSeconds: 0 });
    await reportSnapshots(deps, host.id, [
      { time: "2026-11-21T13:05:00Z", tags: ["home"] },
      { time: "2026-11-21T14:01:00Z", tags: ["etc", "weekly"] },
      { time: "2026-11-21T11:01:00Z", tags: ["etc"] },
    ]);
    expect(await judge()).toMatchObject({
      state: "fresh",
      lastSnapshotAt: new Date("2026-11-21T14:01:00Z"),
      dueAt: new Date("2026-11-21T15:00:00Z"),
      deadline: new Date("2026-11-21T16:00:00Z"),
    });
    const tags = await deps.db.select().from(snapshotTags);
    expect(tags.map((t) => [t.tag, t.snapshotCount]).sort()).toEqual([
      ["etc", 2],
      ["home", 1],
      ["weekly", 1],
    ]);
    // The repository emptied (forget, or another repository): the group is judged without a snapshot.
    await reportSnapshots(deps, host.id, []);
    moveTo(deps, "2026-11-21T14:30:00Z");
    expect((await judge())?.state).toBe("overdue");
    await deps.close();
  });

  it("reads schedules in the zone the agent reported, else in the server's", async () => {
    const deps = await setup();
    moveTo(deps, "2026-10-31T12:00:00Z");
    const ny = await seedScheduledGroup(deps, {
      hostName: "ny",
      timeZone: "America/New_York",
      cron: "0 9 * * *",
    });
    const utc = await seedScheduledGroup(deps, { hostName: "utc", timeZone: null, cron: "0 9 * * *" });
    for (const { host } of [ny, utc]) {
      await reportSnapshots(deps, host.id, [{ time: "2026-10-31T13:05:00Z", tags: ["etc"] }]);
    }
    moveTo(deps, "2026-11-01T13:30:00Z");
    const byHost = new Map(
      (await evaluateFreshness(deps.db, deps.clock.now(), { defaultTimeZone: "UTC" })).map((g) => [
        g.hostName,
        g,
      ]),
    );
    // 08:30 in New York after the change to standard time: the 09:00 run is still ahead.
    expect(byHost.get("ny")).toMatchObject({
      state: "fresh",
      timeZone: "America/New_York",
      dueAt: new Date("2026-11-01T14:00:00Z"),
    });
    // Read in UTC, 09:00 passed at 09:00Z, and its hour of grace with it.
    expect(byHost.get("utc")).toMatchObject({
      state: "overdue",
      timeZone: "UTC",
      dueAt: new Date("2026-11-01T09:00:00Z"),
    });
    await deps.close();
  });

  it("turns unscheduled when its schedule is deleted, and sorts the most urgent first", async () => {
    const deps = await setup();
    const a = await seedScheduledGroup(deps, { hostName: "a-host" });
    const b = await seedScheduledGroup(deps, { hostName: "b-host" });
    const c = await seedScheduledGroup(deps, { hostName: "c-host" });
    await reportSnapshots(deps, a.host.id, [{ time: "2026-11-20T08:00:00Z", tags: ["etc"] }]);
    await reportSnapshots(deps, b.host.id, [{ time: "2026-11-19T08:00:00Z", tags: ["etc"] }]);
    await reportSnapshots(deps, c.host.id, [{ time: "2026-11-21T12:00:00Z", tags: ["etc"] }]);
    const before = await evaluateFreshness(deps.db, deps.clock.now(), { defaultTimeZone: "UTC" });
    expect(before.map((g) => [g.hostName, g.state])).toEqual([
      ["b-host", "overdue"],
      ["a-host", "overdue"],
      ["c-host", "fresh"],
    ]);
    await deleteSchedule(deps, b.audit, b.host.id, b.schedule.id);
    const after = await evaluateFreshness(deps.db, deps.clock.now(), { defaultTimeZone: "UTC" });
    expect(after.map((g) => [g.hostName, g.state])).toEqual([
      ["a-host", "overdue"],
      ["c-host", "fresh"],
      ["b-host", "unscheduled"],
    ]);
    expect(after.at(-1)).toMatchObject({
      deadline: null,
      nextFireAt: null,
      lastSnapshotAt: new Date("2026-11-19T08:00:00Z"),
    });
    await deps.close();
  });
});

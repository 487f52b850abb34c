import { hosts, scheduleSourceGroups, schedules, sourceGroups } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { ulid } from "ulidx";
import { expect, it } from "vitest";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { seedAuditContext, seedHost } from "../testing/seed.js";
import { createTestDeps } from "../testing/test-deps.js";
import { setHostBandwidth } from "./bandwidth.js";
import { pushCaps, pushScheduleSet } from "./host-push.js";

runDbSuite("host pushes", (getDb) => {
  it("stores and pushes bandwidth caps, refusing values that are not whole KiB/s", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const audit = await seedAuditContext(deps);
    const { host } = await seedHost(deps);
    expect(await setHostBandwidth(deps, audit, host.id, { upKbps: 0, downKbps: 1.5 })).toMatchObject({
      ok: false,
      reason: "invalid",
      errors: [expect.stringMatching(/^up_kbps/), expect.stringMatching(/^down_kbps/)],
    });
    expect(await setHostBandwidth(deps, audit, host.id, { upKbps: 100, downKbps: null })).toEqual({
      ok: true,
      caps: { bandwidth_up_kbps: 100, bandwidth_down_kbps: null },
      pushed: false,
    });
    const connection = createRecordingConnection(host.id);
    deps.hub.register(connection);
    expect(await setHostBandwidth(deps, audit, host.id, { upKbps: null, downKbps: 2048 })).toMatchObject({
      pushed: true,
    });
    expect(await pushCaps(deps, host.id)).toBe(true);
    expect(connection.frames.map((frame) => frame.payload)).toEqual([
      { caps: { bandwidth_up_kbps: null, bandwidth_down_kbps: 2048 } },
      { caps: { bandwidth_up_kbps: null, bandwidth_down_kbps: 2048 } },
    ]);
    expect(await setHostBandwidth(deps, audit, ulid(), { upKbps: 1, downKbps: 1 })).toEqual({
      ok: false,
      reason: "host_not_found",
    });
  });

  it("pushes the schedule set under the host's version", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    expect(await pushScheduleSet(deps, host.id)).toBe(false);
    const connection = createRecordingConnection(host.id);
    deps.hub.register(connection);
    const [a, b] = [ulid(), ulid()];
    await deps.db.insert(sourceGroups).values([
      { id: a, hostId: host.id, name: "etc", includes: ["/etc"] },
      { id: b, hostId: host.id, name: "home", includes: ["/home"] },
    ]);
    const scheduleId = ulid();
    await deps.db.insert(schedules).values({ id: scheduleId, hostId: host.id, cron: "*/5 * * * *" });
    await deps.db.insert(scheduleSourceGroups).values([
      { scheduleId, sourceGroupId: b },
      { scheduleId, sourceGroupId: a },
    ]);
    await deps.db.update(hosts).set({ scheduleVersion: 7 }).where(eq(hosts.id, host.id));
    expect(await pushScheduleSet(deps, host.id)).toBe(true);
    expect(connection.frames[0]?.payload).toEqual({
      version: 7,
      schedules: [{ id: scheduleId, cron: "*/5 * * * *", enabled: true, source_groups: [a, b].sort() }],
    });
  });
});

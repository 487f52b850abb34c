import { jobs, maintenance } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { openHold } from "../holds/deletion-holds.js";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { bindCredentials, createTestGroup, seedAuditContext, seedHost } from "../testing/seed.js";
import { createTestDeps } from "../testing/test-deps.js";
import { maintenanceTick } from "./maintenance-ticker.js";
import { releaseHold } from "./release-hold.js";

const REPO = { url: "rest:https://backup.example.org/web-1/", username: "web-1", password: "repo-pass" };
const ADMIN = { url: "rest:https://backup.example.org/web-1/", username: "admin", password: "admin-pass" };

runDbSuite("maintenance ticker", (getDb) => {
  async function setup(options: { admin?: boolean; online?: boolean; policy?: boolean } = {}) {
    // The test clock starts at 2026-11-21T12:00:00Z, a Saturday.
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    await bindCredentials(deps, host.id, { repo: REPO, ...(options.admin ? { admin: ADMIN } : {}) });
    await createTestGroup(deps, host.id, {
      ...(options.policy === false ? {} : { retention_policy: { last: 7 } }),
    });
    const agent = createRecordingConnection(host.id);
    if (options.online !== false) {
      deps.hub.register(agent);
    }
    // The first tick creates the record; cadences count from then.
    expect(await maintenanceTick(deps, deps.clock.now())).toEqual({ dispatched: [], skipped: [] });
    return { deps, host, agent };
  }

  const advanceTo = (deps: Awaited<ReturnType<typeof createTestDeps>>, iso: string) => {
    deps.clock.advance(new Date(iso).getTime() - deps.clock.now().getTime());
  };

  it("fires forget daily at 03:00, prune on Sunday 04:00 and check on the 1st at 05:00, each slot once", async () => {
    const { deps, host, agent } = await setup({ admin: true });
    advanceTo(deps, "2026-11-22T02:59:00Z");
    expect((await maintenanceTick(deps, deps.clock.now())).dispatched).toEqual([]);

    advanceTo(deps, "2026-11-22T03:00:10Z");
    const forget = await maintenanceTick(deps, deps.clock.now());
    expect(forget.dispatched.map((d) => d.kind)).toEqual(["forget"]);
    expect(agent.frames.at(-1)).toMatchObject({
      type: "command.run",
      payload: {
        kind: "forget",
        requires_admin_creds: false,
        forget_groups: [{ tag: "etc", keep: { last: 7 } }],
      },
    });
    // The same slot on the next tick, and after a "restart" (fresh deps on the same database).
    deps.clock.advance(60_000);
    expect((await maintenanceTick(deps, deps.clock.now())).dispatched).toEqual([]);
    const restarted = await createTestDeps({ db: getDb() });
    restarted.hub.register(createRecordingConnection(host.id));
    restarted.clock.advance(deps.clock.now().getTime() - restarted.clock.now().getTime());
    expect((await maintenanceTick(restarted, restarted.clock.now())).dispatched).toEqual([]);

    advanceTo(deps, "2026-11-22T04:00:30Z");
    const from = agent.frames.length;
    const prune = await maintenanceTick(deps, deps.clock.now());
    expect(prune.dispatched.map((d) => d.kind)).toEqual(["prune"]);
    // Admin credentials first, then the command that needs them.
    expect(
      agent.frames
        .slice(from)
        .map((f) => [
          f.type,
          (f.payload as { slot?: string; kind?: string }).slot ?? (f.payload as { kind?: string }).kind,
        ]),
    ).toEqual([
      ["config.update", "admin"],
      ["command.run", "prune"],
    ]);
    expect(agent.frames.at(-1)?.payload).toMatchObject({ requires_admin_creds: true });

    // Earlier runs finished; an active job of a kind is never stacked with another.
    await deps.db.update(jobs).set({ status: "succeeded" }).where(eq(jobs.hostId, host.id));
    advanceTo(deps, "2026-12-01T05:00:00Z");
    const check = await maintenanceTick(deps, deps.clock.now());
    // Forget's daily and prune's Sunday (29th) slots are due as well, once each, in that order;
    // check carries the default 5 % subset.
    expect(check.dispatched.map((d) => d.kind)).toEqual(["forget", "prune", "check"]);
    expect(agent.frames.at(-1)).toMatchObject({
      type: "command.run",
      payload: { kind: "check", check: { read_data_subset: "5%" } },
    });
    const created = await deps.db.select().from(jobs).where(eq(jobs.hostId, host.id));
    expect(created.every((job) => job.actorKind === "system")).toBe(true);
  });

  it("holds the scheduled forget and prune while a deletion hold is open, and runs them once it is released", async () => {
    const { deps, host, agent } = await setup({ admin: true });
    const audit = await seedAuditContext(deps);
    const { hold } = await openHold(
      deps,
      { hostId: host.id, kind: "backup_anomaly", reason: "95% of the files changed", details: {} },
      deps.clock.now(),
    );
    advanceTo(deps, "2026-11-22T04:00:30Z");
    const from = agent.frames.length;
    const held = await maintenanceTick(deps, deps.clock.now());
    expect(held.dispatched).toEqual([]);
    expect(held.skipped.map((skip) => [skip.kind, skip.reason]).sort()).toEqual([
      ["forget", "deletion_held"],
      ["prune", "deletion_held"],
    ]);
    expect(agent.frames.slice(from)).toEqual([]);
    await releaseHold(deps, audit, host.id, hold.id, "a planned migration rewrote the files");
    advanceTo(deps, "2026-11-23T03:00:30Z");
    expect((await maintenanceTick(deps, deps.clock.now())).dispatched.map((d) => d.kind)).toEqual(["forget"]);
  });

  it("skips an offline host without queueing anything, and does not owe it the slot later", async () => {
    const { deps, host, agent } = await setup({ admin: true, online: false });
    advanceTo(deps, "2026-11-22T03:00:10Z");
    const report = await maintenanceTick(deps, deps.clock.now());
    expect(report.dispatched).toEqual([]);
    expect(report.skipped).toEqual([{ hostId: host.id, kind: "forget", reason: "offline" }]);
    expect(await deps.db.select().from(jobs).where(eq(jobs.hostId, host.id))).toEqual([]);
    deps.hub.register(agent);
    deps.clock.advance(60_000);
    expect(await maintenanceTick(deps, deps.clock.now())).toEqual({ dispatched: [], skipped: [] });
    expect(agent.frames).toEqual([]);
  });

  it("skips prune silently without admin credentials; forget without any retention policy is skipped too", async () => {
    const { deps, host, agent } = await setup({ admin: false, policy: false });
    advanceTo(deps, "2026-11-22T04:00:10Z");
    const report = await maintenanceTick(deps, deps.clock.now());
    expect(report.dispatched).toEqual([]);
    expect(report.skipped).toEqual([
      { hostId: host.id, kind: "forget", reason: "no_retention_policy" },
      { hostId: host.id, kind: "prune", reason: "no_admin_credentials" },
    ]);
    expect(agent.frames).toEqual([]);
    expect(deps.logLines.some((line) => line.includes("no_admin_credentials"))).toBe(false);
  });

  it("honours the enable flags and the configured time zone", async () => {
    const deps = await createTestDeps({ db: getDb(), config: { timeZone: "Europe/Berlin" } });
    const { host } = await seedHost(deps);
    await bindCredentials(deps, host.id, { repo: REPO });
    await createTestGroup(deps, host.id, { retention_policy: { last: 2 } });
    deps.hub.register(createRecordingConnection(host.id));
    await maintenanceTick(deps, deps.clock.now());
    // 03:00 in Berlin is 02:00 UTC in November.
    advanceTo(deps, "2026-11-22T02:00:05Z");
    expect((await maintenanceTick(deps, deps.clock.now())).dispatched.map((d) => d.kind)).toEqual(["forget"]);
    await deps.db.update(maintenance).set({ forgetEnabled: false }).where(eq(maintenance.hostId, host.id));
    advanceTo(deps, "2026-11-23T02:00:05Z");
    expect((await maintenanceTick(deps, deps.clock.now())).dispatched).toEqual([]);
  });
});

/**
 * Restore drills on the server, on PGlite and PostgreSQL: the cadence is off until enabled, a due
 * drill goes to the newest cached snapshot once per slot, an agent older than protocol 6 or a host
 * without snapshots is skipped with its reason, an operator's drill is refused for the same
 * reasons, and the last drill is read back from the newest ended drill job.
 */
import { jobs, maintenance, snapshots } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { RequestError } from "../errors.js";
import { validate } from "../http/validate.js";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { bindCredentials, seedAuditContext, seedHost, seedJob } from "../testing/seed.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";
import { lastDrillOf } from "./last-drill.js";
import { startManualJob } from "./maintenance-jobs.js";
import {
  MaintenanceBody,
  maintenanceJson,
  readMaintenance,
  updateMaintenance,
} from "./maintenance-record.js";
import { maintenanceTick } from "./maintenance-ticker.js";

const REPO = { url: "rest:https://backup.example.org/web-1/", username: "web-1", password: "repo-pass" };
const OLD_SNAPSHOT = "1111111111111111111111111111111111111111111111111111111111111111";
const NEW_SNAPSHOT = "2222222222222222222222222222222222222222222222222222222222222222";

runDbSuite("restore drills", (getDb) => {
  async function setup(options: { protocolVersion?: number; snapshots?: boolean; drill?: boolean } = {}) {
    // The test clock starts at 2026-11-21T12:00:00Z, a Saturday; the drill's default is Wednesday 06:00.
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps, { protocolVersion: options.protocolVersion ?? 6 });
    await bindCredentials(deps, host.id, { repo: REPO });
    if (options.snapshots !== false) {
      for (const [id, time] of [
        [OLD_SNAPSHOT, "2026-11-20T01:00:00Z"],
        [NEW_SNAPSHOT, "2026-11-21T01:00:00Z"],
      ] as const) {
        await deps.db.insert(snapshots).values({
          hostId: host.id,
          id,
          shortId: id.slice(0, 8),
          time: new Date(time),
          hostname: "web-1",
        });
      }
    }
    const agent = createRecordingConnection(host.id);
    deps.hub.register(agent);
    await maintenanceTick(deps, deps.clock.now());
    // Only drills are looked at here; the other cadences have their own tests.
    await deps.db
      .update(maintenance)
      .set({ forgetEnabled: false, pruneEnabled: false, checkEnabled: false })
      .where(eq(maintenance.hostId, host.id));
    const audit = await seedAuditContext(deps);
    if (options.drill !== false) {
      await updateMaintenance(deps, audit, host.id, { drill_enabled: true, drill_sample_files: 7 });
    }
    return { deps, host, agent, audit };
  }

  const advanceTo = (deps: TestDeps, iso: string) => {
    deps.clock.advance(new Date(iso).getTime() - deps.clock.now().getTime());
  };

  it("is off by default: the record says so and no drill is dispatched at its slot", async () => {
    const { deps, host, agent } = await setup({ drill: false });
    const record = await readMaintenance(deps.db, host.id, deps.clock.now());
    expect(maintenanceJson(record, "UTC", deps.clock.now())).toMatchObject({
      drill_cron: "0 6 * * 3",
      drill_enabled: false,
      drill_sample_files: 20,
      next_drill_at: null,
    });
    advanceTo(deps, "2026-11-25T06:00:10Z");
    expect(await maintenanceTick(deps, deps.clock.now())).toEqual({ dispatched: [], skipped: [] });
    expect(agent.frames).toEqual([]);
  });

  it("dispatches a due drill of the newest cached snapshot once per slot, as system", async () => {
    const { deps, host, agent } = await setup();
    advanceTo(deps, "2026-11-25T05:59:00Z");
    expect((await maintenanceTick(deps, deps.clock.now())).dispatched).toEqual([]);
    advanceTo(deps, "2026-11-25T06:00:10Z");
    const report = await maintenanceTick(deps, deps.clock.now());
    expect(report.dispatched.map((d) => d.kind)).toEqual(["drill"]);
    expect(agent.frames.at(-1)).toMatchObject({
      type: "command.run",
      payload: {
        kind: "drill",
        requires_admin_creds: false,
        drill: { snapshot_id: NEW_SNAPSHOT, sample_files: 7 },
      },
    });
    const [job] = await deps.db.select().from(jobs).where(eq(jobs.hostId, host.id));
    expect(job).toMatchObject({
      kind: "drill",
      actorKind: "system",
      params: { snapshot_id: NEW_SNAPSHOT, sample_files: 7 },
    });
    // The slot is taken: neither the next tick nor the end of the first job brings it back.
    await deps.db.update(jobs).set({ status: "succeeded" }).where(eq(jobs.hostId, host.id));
    deps.clock.advance(60_000);
    expect((await maintenanceTick(deps, deps.clock.now())).dispatched).toEqual([]);
    advanceTo(deps, "2026-12-02T06:00:00Z");
    expect((await maintenanceTick(deps, deps.clock.now())).dispatched.map((d) => d.kind)).toEqual(["drill"]);
  });

  it("skips an agent older than protocol 6 with its reason and sends it nothing", async () => {
    const { deps, host, agent } = await setup({ protocolVersion: 5 });
    advanceTo(deps, "2026-11-25T06:00:10Z");
    const report = await maintenanceTick(deps, deps.clock.now());
    expect(report).toEqual({
      dispatched: [],
      skipped: [{ hostId: host.id, kind: "drill", reason: "agent_too_old" }],
    });
    expect(agent.frames).toEqual([]);
    expect(await deps.db.select().from(jobs).where(eq(jobs.hostId, host.id))).toEqual([]);
    expect(
      deps.logLines.some(
        (line) => line.includes("agent_too_old") && line.includes("maintenance run skipped"),
      ),
    ).toBe(true);
  });

  it("skips a host without any cached snapshot", async () => {
    const { deps, host, agent } = await setup({ snapshots: false });
    advanceTo(deps, "2026-11-25T06:00:10Z");
    expect((await maintenanceTick(deps, deps.clock.now())).skipped).toEqual([
      { hostId: host.id, kind: "drill", reason: "no_snapshot" },
    ]);
    expect(agent.frames).toEqual([]);
  });

  it("an operator's drill is refused for an old agent or no snapshot, naming why; otherwise it is sent", async () => {
    const old = await setup({ protocolVersion: 5 });
    const refused = await startManualJob(old.deps, old.host.id, "drill", old.audit).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RequestError);
    expect((refused as RequestError).message).toBe(
      "kind: restore drills need an agent of protocol 6 or later; this host's agent speaks 5: update the agent",
    );
    expect(old.agent.frames).toEqual([]);

    const empty = await setup({ snapshots: false });
    await expect(startManualJob(empty.deps, empty.host.id, "drill", empty.audit)).rejects.toThrow(
      "kind: the host has no snapshot to drill yet; run a backup first",
    );

    const ok = await setup();
    const job = await startManualJob(ok.deps, ok.host.id, "drill", ok.audit);
    expect(job).toMatchObject({ kind: "drill", actorKind: "user" });
    expect(ok.agent.frames.at(-1)?.payload).toMatchObject({
      job_id: job.id,
      drill: { snapshot_id: NEW_SNAPSHOT, sample_files: 7 },
    });
    // One drill at a time per host.
    await expect(startManualJob(ok.deps, ok.host.id, "drill", ok.audit)).rejects.toThrow(
      /already queued or running/,
    );
  });

  it("validates the drill fields, naming the field, and restarts the count when enabled", async () => {
    for (const [body, field] of [
      [{ drill_sample_files: 0 }, "drill_sample_files"],
      [{ drill_sample_files: 101 }, "drill_sample_files"],
      [{ drill_sample_files: "20" }, "drill_sample_files"],
      [{ drill_enabled: "yes" }, "drill_enabled"],
    ] as const) {
      expect(() => validate(MaintenanceBody, body), JSON.stringify(body)).toThrow(new RegExp(`^${field}: `));
    }
    const { deps, host, audit } = await setup({ drill: false });
    await expect(updateMaintenance(deps, audit, host.id, { drill_cron: "61 * * * *" })).rejects.toThrow(
      /^drill_cron: /,
    );
    // Enabled on Wednesday at 07:00: that morning's 06:00 slot is not owed, the next week's is.
    advanceTo(deps, "2026-11-25T07:00:00Z");
    const row = await updateMaintenance(deps, audit, host.id, {
      drill_enabled: true,
      drill_cron: "0 6 * * 3",
    });
    expect(row).toMatchObject({ drillEnabled: true, lastDrillSlotAt: new Date("2026-11-25T07:00:00Z") });
    expect((await maintenanceTick(deps, deps.clock.now())).dispatched).toEqual([]);
  });

  it("reads the last drill from the newest ended drill job, showing only a summary it can vouch for", async () => {
    const { deps, host } = await setup({ drill: false });
    expect(await lastDrillOf(deps.db, host.id)).toBeUndefined();
    const summary = {
      snapshot_id: NEW_SNAPSHOT,
      files_in_snapshot: 40,
      files_checked: 7,
      bytes_checked: 7000,
      mismatch_count: 0,
      mismatches: [],
    };
    await seedJob(
      deps,
      {
        hostId: host.id,
        kind: "drill",
        actorKind: "system",
        params: { snapshot_id: NEW_SNAPSHOT, sample_files: 7 },
      },
      { status: "succeeded", summary, finishedAt: deps.clock.now() },
    );
    expect(await lastDrillOf(deps.db, host.id)).toMatchObject({
      status: "succeeded",
      snapshotId: NEW_SNAPSHOT,
      summary,
    });
    const failed = await seedJob(
      deps,
      {
        hostId: host.id,
        kind: "drill",
        actorKind: "system",
        params: { snapshot_id: OLD_SNAPSHOT, sample_files: 7 },
      },
      {
        status: "failed",
        summary: { files_checked: "many" },
        error: "restic could not restore",
        finishedAt: deps.clock.now(),
      },
    );
    // A running drill is not the last drill yet.
    await seedJob(
      deps,
      { hostId: host.id, kind: "drill", actorKind: "system", params: {} },
      { status: "running" },
    );
    expect(await lastDrillOf(deps.db, host.id)).toEqual({
      jobId: failed.id,
      status: "failed",
      finishedAt: deps.clock.now(),
      snapshotId: OLD_SNAPSHOT,
      summary: undefined,
      error: "restic could not restore",
    });
  });
});

import { auditLog, jobs, pendingRuns } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { writeAudit } from "../audit/audit.js";
import type { AgentConnection } from "../hub/local-hub.js";
import { HOST_OFFLINE_REASON, queuePendingRun } from "../retries/pending-runs.js";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { createTestGroup, seedAuditContext, seedHost } from "../testing/seed.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";
import { type JobSpec, startJob, startJobs } from "./start-job.js";

async function audited(deps: TestDeps, hostId: string, offline: JobSpec["offline"]): Promise<JobSpec> {
  const context = await seedAuditContext(deps);
  return {
    kind: "check",
    hostId,
    actor: { kind: "user", userId: context.actor.userId },
    params: { read_data_subset: "" },
    command: (id) => ({ job_id: id, kind: "check", requires_admin_creds: false, check: {} }),
    audit: {
      ...context,
      action: "job.check",
      targetKind: "host",
      targetId: hostId,
      details: { host_id: hostId },
    },
    offline,
  };
}

/** An agent whose socket fails as the command is written to it. */
function brokenConnection(hostId: string): AgentConnection {
  return {
    hostId,
    send() {
      throw new Error("socket closed under the write");
    },
    close() {},
  };
}

const rowsOf = async (deps: TestDeps, hostId: string) => ({
  jobs: await deps.db.select().from(jobs).where(eq(jobs.hostId, hostId)),
  audit: await deps.db.select().from(auditLog).where(eq(auditLog.targetId, hostId)),
  pending: await deps.db.select().from(pendingRuns).where(eq(pendingRuns.hostId, hostId)),
});

runDbSuite("startJob", (getDb) => {
  it("writes the job and exactly one audit entry naming it, then sends its command", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    const connection = createRecordingConnection(host.id);
    deps.hub.register(connection);
    const started = await startJob(deps, await audited(deps, host.id, "refuse"));
    if (!started.ok) {
      throw new Error(`not started: ${started.reason}`);
    }
    const rows = await rowsOf(deps, host.id);
    expect(rows.jobs.map((job) => [job.id, job.status, job.actorKind])).toEqual([
      [started.job.id, "queued", "user"],
    ]);
    expect(rows.audit.map((entry) => [entry.action, entry.details])).toEqual([
      ["job.check", { host_id: host.id, job_id: started.job.id }],
    ]);
    expect(connection.frames.map((frame) => [frame.type, frame.payload])).toEqual([
      ["command.run", { job_id: started.job.id, kind: "check", requires_admin_creds: false, check: {} }],
    ]);
  });

  it("names the job as the entry's target when the audit names no other", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    deps.hub.register(createRecordingConnection(host.id));
    const spec = await audited(deps, host.id, "refuse");
    const { targetId: _host, ...audit } = spec.audit ?? { actor: "system", action: "", targetKind: "" };
    const started = await startJob(deps, { ...spec, audit: { ...audit, targetKind: "job" } });
    const jobId = started.ok ? started.job.id : "";
    const [entry] = await deps.db.select().from(auditLog).where(eq(auditLog.targetId, jobId));
    expect([entry?.targetKind, entry?.details]).toEqual(["job", { host_id: host.id }]);
  });

  it("leaves no job row when its audit entry cannot be written: one transaction", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    const connection = createRecordingConnection(host.id);
    deps.hub.register(connection);
    const taken = deps.ids.ulid(deps.clock.now());
    await writeAudit(deps.db, deps, { actor: "system", action: "earlier", id: taken });
    // Every audit id collides with the entry already there: the insert fails in the database.
    const colliding = { ...deps, ids: { ...deps.ids, ulid: () => taken } };
    await expect(startJob(colliding, await audited(deps, host.id, "refuse"))).rejects.toThrow();
    const rows = await rowsOf(deps, host.id);
    expect([rows.jobs, rows.audit]).toEqual([[], []]);
    expect(connection.frames).toEqual([]);
  });

  it("refuses an offline host's job without writing anything", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    expect(await startJob(deps, await audited(deps, host.id, "refuse"))).toEqual({
      ok: false,
      reason: "offline",
    });
    expect(await rowsOf(deps, host.id)).toEqual({ jobs: [], audit: [], pending: [] });
  });

  async function queueing(deps: TestDeps, hostId: string): Promise<JobSpec> {
    const group = await createTestGroup(deps, hostId, { retry_max: 2 });
    return audited(deps, hostId, {
      queue: async (tx) =>
        (
          await queuePendingRun(
            { ...deps, db: tx },
            { hostId, group, actorKind: "user", attemptsMade: 0, reason: HOST_OFFLINE_REASON },
          )
        )?.id,
    });
  }

  it.each([
    { when: "an offline host's job by its policy, audited with what was queued", sendFails: false },
    {
      when: "instead, by the same policy, when the command cannot be sent after the commit",
      sendFails: true,
    },
  ])("queues $when", async ({ sendFails }) => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    if (sendFails) {
      deps.hub.register(brokenConnection(host.id));
    }
    const started = await startJob(deps, await queueing(deps, host.id));
    const rows = await rowsOf(deps, host.id);
    expect(rows.pending).toHaveLength(1);
    const pendingRunId = rows.pending[0]?.id;
    expect(started).toEqual({ ok: false, reason: "offline", pendingRunId });
    expect(rows.jobs).toEqual([]);
    expect(rows.audit.map((entry) => entry.details)).toEqual([
      { host_id: host.id, pending_run_id: pendingRunId },
    ]);
  });

  it("undoes the job and its entry together when the command cannot be sent after the commit", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    deps.hub.register(brokenConnection(host.id));
    expect(await startJob(deps, await audited(deps, host.id, "refuse"))).toEqual({
      ok: false,
      reason: "offline",
    });
    expect(await rowsOf(deps, host.id)).toEqual({ jobs: [], audit: [], pending: [] });
  });

  it("writes nothing of a batch whose claim declines, and all of it when the claim goes ahead", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    const connection = createRecordingConnection(host.id);
    deps.hub.register(connection);
    const specs = [await audited(deps, host.id, "refuse"), await audited(deps, host.id, "refuse")];
    expect(await startJobs(deps, specs, async () => "acted_on" as const)).toEqual({ declined: "acted_on" });
    expect(await rowsOf(deps, host.id)).toEqual({ jobs: [], audit: [], pending: [] });
    expect(connection.frames).toEqual([]);

    const started = await startJobs(deps, specs, async () => undefined);
    const results = "results" in started ? started.results : [];
    expect(results.map((result) => result.ok)).toEqual([true, true]);
    const rows = await rowsOf(deps, host.id);
    expect([rows.jobs.length, rows.audit.length, connection.frames.length]).toEqual([2, 2, 2]);
  });
});

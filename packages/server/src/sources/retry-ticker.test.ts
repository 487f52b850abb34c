import { jobs, pendingRuns } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { retryDelayMs } from "../retries/pending-runs.js";
import { isTransientFailure, queueRetryAfterFailure } from "../retries/transient-failure.js";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { createTestGroup, seedHost, seedJob } from "../testing/seed.js";
import { queueOfflineBackup } from "../testing/start-backup-test-support.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";
import { retryTick } from "./retry-ticker.js";

it("spaces retries by backoff * 2^(n-1)", () => {
  expect([1, 2, 3].map((n) => retryDelayMs(60, n))).toEqual([60_000, 120_000, 240_000]);
});

it("counts lock and connection failures with exit 1, and lost jobs, as transient", () => {
  expect(
    isTransientFailure({ status: "failed", exitCode: 1, error: "unable to create lock in backend" }),
  ).toBe(true);
  expect(isTransientFailure({ status: "failed", exitCode: 1, error: "dial tcp: connection refused" })).toBe(
    true,
  );
  expect(isTransientFailure({ status: "lost", exitCode: null, error: null })).toBe(true);
  expect(isTransientFailure({ status: "failed", exitCode: 3, error: "connection refused" })).toBe(false);
  expect(isTransientFailure({ status: "failed", exitCode: 1, error: "Fatal: wrong password" })).toBe(false);
});

/** The one job a pending run left once it ended: nothing is left waiting. */
async function jobOfEndedRun(deps: TestDeps) {
  expect(await deps.db.select().from(pendingRuns)).toEqual([]);
  const [job] = await deps.db.select().from(jobs);
  return job;
}

runDbSuite("retry ticker", (getDb) => {
  it("dispatches a queued run once its host is back, with the retry recorded on the job", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host, group, queued } = await queueOfflineBackup(
      deps,
      { retry_max: 3, retry_backoff_seconds: 60 },
      "user",
    );
    expect(queued.outcome).toBe("queued");

    deps.clock.advance(59_000);
    expect(await retryTick(deps, deps.clock.now())).toEqual({ dispatched: [], rescheduled: [], gaveUp: [] });

    const agent = createRecordingConnection(host.id);
    deps.hub.register(agent);
    deps.clock.advance(1_000);
    const report = await retryTick(deps, deps.clock.now());
    expect(report.dispatched).toHaveLength(1);
    expect(agent.frames.map((f) => [f.type, (f.payload as { tag?: string }).tag])).toEqual([
      ["command.run", "etc"],
    ]);
    const job = await jobOfEndedRun(deps);
    expect(job).toMatchObject({
      kind: "backup",
      actorKind: "user",
      sourceGroupId: group.id,
      status: "queued",
    });
    expect(job?.params).toMatchObject({ tag: "etc", retry: 1 });
  });

  it("gives up after retry_max tries while the host stays offline, leaving a failed job", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { group } = await queueOfflineBackup(deps, { retry_max: 2, retry_backoff_seconds: 10 }, "schedule");
    deps.clock.advance(10_000);
    expect((await retryTick(deps, deps.clock.now())).rescheduled).toHaveLength(1);
    const [row] = await deps.db.select().from(pendingRuns);
    expect(row?.attempt).toBe(1);
    expect(row?.nextAttemptAt.getTime()).toBe(deps.clock.now().getTime() + 20_000);
    deps.clock.advance(20_000);
    expect((await retryTick(deps, deps.clock.now())).gaveUp).toHaveLength(1);
    expect(await jobOfEndedRun(deps)).toMatchObject({
      status: "failed",
      actorKind: "schedule",
      sourceGroupId: group.id,
      error: "host offline: gave up after 2 attempts",
    });
  });

  it("queues a retry after a transient backup failure while attempts remain", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    const group = await createTestGroup(deps, host.id, { retry_max: 1 });
    const failed = await seedJob(
      deps,
      { hostId: host.id, kind: "backup", actorKind: "user", sourceGroupId: group.id },
      { status: "failed", exitCode: 1, error: "repository is already locked" },
    );
    const id = await queueRetryAfterFailure(deps, failed.id);
    expect(id).toBeDefined();
    const [row] = await deps.db.select().from(pendingRuns).where(eq(pendingRuns.lastJobId, failed.id));
    expect(row).toMatchObject({
      attempt: 0,
      sourceGroupId: group.id,
      reason: "repository is already locked",
    });

    const retried = await seedJob(
      deps,
      { hostId: host.id, kind: "backup", actorKind: "user", sourceGroupId: group.id, params: { retry: 1 } },
      { status: "failed", exitCode: 1, error: "connection refused" },
    );
    expect(await queueRetryAfterFailure(deps, retried.id)).toBeUndefined();
    const wrongPassword = await seedJob(
      deps,
      { hostId: host.id, kind: "backup", actorKind: "user", sourceGroupId: group.id },
      { status: "failed", exitCode: 1, error: "wrong password" },
    );
    expect(await queueRetryAfterFailure(deps, wrongPassword.id)).toBeUndefined();
  });
});

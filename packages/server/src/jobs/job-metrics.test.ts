import { JOB_METRICS_NOT_STARTED, jobMetrics, jobs } from "@fleetback/db";
import { testEngines } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { retryTick } from "../sources/retry-ticker.js";
import { seedHost } from "../testing/seed.js";
import { queueOfflineBackup } from "../testing/start-backup-test-support.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";
import { createJob } from "./create-job.js";
import { JOB_DURATION_BUCKETS_SECONDS, readJobMetrics, recordJobEnds } from "./job-metrics.js";

const bucketIndex = (bound: number) => JOB_DURATION_BUCKETS_SECONDS.indexOf(bound as never);

for (const engine of testEngines()) {
  describe(`job metrics (${engine})`, () => {
    let deps: TestDeps;
    beforeEach(async () => {
      deps = await createTestDeps({ engine });
    });
    afterEach(async () => {
      await deps.close();
    });

    it("counts only jobs in a final status, each in the smallest bucket its duration fits", async () => {
      const { host } = await seedHost(deps);
      const at = new Date("2026-11-21T10:00:00Z");
      const job = async (status: "running" | "succeeded" | "failed", seconds: number | null) => {
        const row = await createJob(deps, { hostId: host.id, kind: "check", actorKind: "system" });
        await deps.db
          .update(jobs)
          .set({
            status,
            startedAt: seconds === null ? null : at,
            finishedAt: status === "running" ? null : new Date(at.getTime() + (seconds ?? 0) * 1000),
          })
          .where(eq(jobs.id, row.id));
        return row.id;
      };
      const ids = [
        await job("succeeded", 60),
        await job("succeeded", 60.5),
        await job("failed", null),
        await job("running", 5),
      ];
      await recordJobEnds(deps.db, ids);
      const [failed, succeeded, ...rest] = await readJobMetrics(deps.db);
      expect(rest).toEqual([]);
      expect(failed).toMatchObject({
        kind: "check",
        outcome: "failed",
        total: 1,
        observed: 0,
        durationSecondsSum: 0,
      });
      expect(succeeded).toMatchObject({ kind: "check", outcome: "succeeded", total: 2, observed: 2 });
      expect(succeeded?.durationSecondsSum).toBeCloseTo(120.5);
      // 60 s is "le 60" (bounds are inclusive); 60.5 s is the next bucket.
      expect(succeeded?.buckets[bucketIndex(30)]).toBe(0);
      expect(succeeded?.buckets[bucketIndex(60)]).toBe(1);
      expect(succeeded?.buckets[bucketIndex(120)]).toBe(2);
    });

    it("counts the failed backup a retry leaves when it gives up on an offline host", async () => {
      await queueOfflineBackup(deps, { retry_max: 1, retry_backoff_seconds: 10 }, "schedule");
      deps.clock.advance(10_000);
      expect((await retryTick(deps, deps.clock.now())).gaveUp).toHaveLength(1);
      expect(await readJobMetrics(deps.db)).toEqual([
        expect.objectContaining({ kind: "backup", outcome: "failed", total: 1, observed: 0 }),
      ]);
    });

    it("reads rows of other bounds into the next larger bucket, and above the largest only into +Inf", async () => {
      await deps.db.insert(jobMetrics).values([
        // A bound no longer in the list (buckets were changed since): counted from 60 up.
        { kind: "backup", outcome: "succeeded", leSeconds: 45, count: 4, durationSecondsSum: 160 },
        {
          kind: "backup",
          outcome: "succeeded",
          leSeconds: Number.POSITIVE_INFINITY,
          count: 2,
          durationSecondsSum: 3e5,
        },
        {
          kind: "backup",
          outcome: "succeeded",
          leSeconds: JOB_METRICS_NOT_STARTED,
          count: 3,
          durationSecondsSum: 0,
        },
      ]);
      const [backup] = await readJobMetrics(deps.db);
      expect(backup).toMatchObject({ total: 9, observed: 6, durationSecondsSum: 300_160 });
      expect(backup?.buckets[bucketIndex(30)]).toBe(0);
      expect(backup?.buckets[bucketIndex(60)]).toBe(4);
      expect(backup?.buckets.at(-1)).toBe(4);
    });
  });
}

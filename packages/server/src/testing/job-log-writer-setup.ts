/**
 * @module testing/job-log-writer-setup
 * One running backup job, a second host, and a job log writer on manual timers with batches of
 * five lines (unless told otherwise): what both job-log-writer test files start each test from, so the one-job tests and
 * the many-jobs tests can live in files of their own.
 */
import { type Database, jobLogs } from "@fleetback/db";
import type { LogStream } from "@fleetback/protocol";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { asc, eq } from "drizzle-orm";
import { createInProcessJobEvents } from "../jobs/in-process-job-events.js";
import { createJobLogWriter } from "../jobs/job-log-writer.js";
import { seedHost, seedJob } from "./seed.js";
import { createTestDeps } from "./test-deps.js";

export async function setUpJobLogWriter(db: Database, { batchLines = 5 } = {}) {
  const deps = await createTestDeps({ db });
  const { host } = await seedHost(deps);
  const other = await seedHost(deps, { name: "other" });
  const job = await seedJob(
    deps,
    { hostId: host.id, kind: "backup", actorKind: "user" },
    { status: "running" },
  );
  const timers = createManualTimers();
  const events = createInProcessJobEvents();
  const writer = createJobLogWriter({
    db: deps.db,
    log: deps.log,
    events,
    timers,
    batchLines,
  });
  const line = (text: string): LogStream => ({
    job_id: job.id,
    stream: "stdout",
    line: text,
    ts: "2026-11-21T12:00:00Z",
  });
  const stored = () =>
    deps.db.select().from(jobLogs).where(eq(jobLogs.jobId, job.id)).orderBy(asc(jobLogs.seq));
  return { deps, host, other, job, timers, events, writer, line, stored };
}

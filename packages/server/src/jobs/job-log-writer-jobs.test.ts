/**
 * @module jobs/job-log-writer-jobs.test
 * The job log writer with the lines of several jobs in one batch: one statement for all of them,
 * each job's own seq, and what happens when the database is down, a job is deleted meanwhile or
 * one job's row is refused.
 */
import { type Database, executeRows, jobLogs, jobs } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import type { LogStream } from "@fleetback/protocol";
import { asc, eq, getTableName, sql } from "drizzle-orm";
import { expect, it, vi } from "vitest";
import { eventually } from "../testing/eventually.js";
import { setUpJobLogWriter } from "../testing/job-log-writer-setup.js";
import { seedJob } from "../testing/seed.js";
import { spyOnTableWrites } from "../testing/table-writes.js";
import { createJobLogWriter } from "./job-log-writer.js";

/** The next statement that writes rows fails as if the database were unreachable, once. */
function failNextWriteAsDown(db: Database): void {
  const down = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
  // Each statement of lines runs in a transaction of its own (it holds the lines' jobs).
  vi.spyOn(db, "transaction").mockRejectedValueOnce(down);
}

function logLine(jobId: string, line: string, stream: LogStream["stream"] = "stdout"): LogStream {
  return { job_id: jobId, stream, line, ts: "2026-11-21T12:00:00Z" };
}

/** Waits until the writer has sequenced `count` lines (it emits each as it numbers it). */
function untilSequenced(sequenced: readonly string[], count: number, what = "every line sequenced") {
  return eventually(
    () => sequenced.length,
    (n) => n === count,
    { what },
  );
}

runDbSuite("job log writer, several jobs", (getDb) => {
  const setUp = () => setUpJobLogWriter(getDb());

  /** Three jobs of two hosts, a writer on manual timers, and lines for each job interleaved. */
  async function setUpJobs() {
    const { deps, host, other, job, timers, events } = await setUp();
    const second = await seedJob(
      deps,
      { hostId: host.id, kind: "check", actorKind: "user" },
      { status: "running" },
    );
    const third = await seedJob(
      deps,
      { hostId: other.host.id, kind: "backup", actorKind: "user" },
      { status: "running" },
    );
    const writer = createJobLogWriter({ db: deps.db, log: deps.log, events, timers });
    const sequenced: string[] = [];
    events.on("job.log", (event) => sequenced.push(event.line));
    const owned = [
      { hostId: host.id, jobId: job.id },
      { hostId: host.id, jobId: second.id },
      { hostId: other.host.id, jobId: third.id },
    ];
    const appendInterleaved = (count: number) => {
      for (let i = 0; i < count; i += 1) {
        for (const { hostId, jobId } of owned) {
          writer.append(hostId, logLine(jobId, `${jobId}:${i}`));
        }
      }
    };
    const storedOf = (jobId: string) =>
      deps.db.select().from(jobLogs).where(eq(jobLogs.jobId, jobId)).orderBy(asc(jobLogs.seq));
    return { deps, host, other, owned, timers, writer, sequenced, appendInterleaved, storedOf };
  }

  it("stores the lines of many jobs in one statement, each job's seq in its own order", async () => {
    const { deps, host, other, owned, timers, writer, sequenced, appendInterleaved, storedOf } =
      await setUpJobs();
    const writes = spyOnTableWrites(deps.db, jobLogs);
    appendInterleaved(10);
    // A forged line for the other host's job, amid the batch: never written, never emitted.
    const [, , third] = owned;
    writer.append(host.id, logLine(third?.jobId ?? "", "forged", "stderr"));
    await untilSequenced(sequenced, 30, "every owned line sequenced");
    expect(writes.count()).toBe(0);
    timers.runAll();
    await writer.finish(other.host.id, third?.jobId ?? "");
    expect(writes.count()).toBe(1);
    for (const { jobId } of owned) {
      const rows = await storedOf(jobId);
      expect(rows.map((row) => [row.seq, row.line])).toEqual(
        Array.from({ length: 10 }, (_, i) => [i + 1, `${jobId}:${i}`]),
      );
    }
    expect(sequenced).not.toContain("forged");
    // The foreign key's checks were off for the write's transaction only.
    const [role] = await executeRows<{ role: string }>(
      deps.db,
      sql`select current_setting('session_replication_role') as role`,
    );
    expect(role?.role).toBe("origin");
    await writer.close();
  });

  it("retries a batch while the database is down, then stores it once", async () => {
    const { deps, owned, timers, writer, sequenced, appendInterleaved, storedOf } = await setUpJobs();
    appendInterleaved(4);
    await untilSequenced(sequenced, 12);
    const warn = vi.spyOn(deps.log, "warn");
    failNextWriteAsDown(deps.db);
    timers.runAll();
    await writer.close();
    expect(warn.mock.calls.filter(([, msg]) => String(msg).includes("retrying job log lines"))).toHaveLength(
      1,
    );
    for (const { jobId } of owned) {
      expect((await storedOf(jobId)).map((row) => row.seq)).toEqual([1, 2, 3, 4]);
    }
  });

  it("drops the lines of a job deleted while they wait, in the same statement as the others'", async () => {
    const { deps, owned, timers, writer, sequenced, appendInterleaved, storedOf } = await setUpJobs();
    appendInterleaved(3);
    await untilSequenced(sequenced, 9);
    const [gone, ...kept] = owned;
    await deps.db.delete(jobs).where(eq(jobs.id, gone?.jobId ?? ""));
    const writes = spyOnTableWrites(deps.db, jobLogs);
    const warn = vi.spyOn(deps.log, "warn");
    timers.runAll();
    await writer.close();
    expect(writes.count()).toBe(1);
    // With each row's foreign-key check skipped, nothing but the statement's own lookup keeps
    // these lines from being stored without their job.
    expect(await storedOf(gone?.jobId ?? "")).toEqual([]);
    for (const { jobId } of kept) {
      expect((await storedOf(jobId)).map((row) => row.line)).toEqual([0, 1, 2].map((i) => `${jobId}:${i}`));
    }
    expect(
      warn.mock.calls.some(
        ([fields, msg]) =>
          String(msg).includes("deleted meanwhile") &&
          JSON.stringify(fields).includes(gone?.jobId ?? "no job"),
      ),
    ).toBe(true);
  });

  it("a batch one job's row fails is written job by job: only that job loses its lines", async () => {
    const { deps, host, owned, timers, writer, sequenced, appendInterleaved, storedOf } = await setUpJobs();
    appendInterleaved(3);
    const [bad, ...good] = owned;
    // A stream the table's CHECK refuses (the protocol would never let one through).
    writer.append(host.id, logLine(bad?.jobId ?? "", "refused", "bogus" as "stdout"));
    await untilSequenced(sequenced, 10);
    const writes = spyOnTableWrites(deps.db, jobLogs);
    timers.runAll();
    await writer.close();
    // The failed batch, then one statement for each of its three jobs.
    expect(writes.count()).toBe(4);
    expect(await storedOf(bad?.jobId ?? "")).toEqual([]);
    for (const { jobId } of good) {
      expect((await storedOf(jobId)).map((row) => row.line)).toEqual([0, 1, 2].map((i) => `${jobId}:${i}`));
    }
  });

  it("writes into a table with no trigger of its own, which inserting with triggers off would skip", async () => {
    const rows = await executeRows<{ tgname: string }>(
      getDb(),
      sql`select tgname from pg_trigger where tgrelid = ${getTableName(jobLogs)}::regclass and not tgisinternal`,
    );
    expect(rows).toEqual([]);
  });
});

/**
 * @module jobs/job-log-writer.test
 * The job log writer with one job at a time: batching, ownership, seq, epilogues, exact text,
 * backlogs and bounds. Several jobs in one batch, and a database that fails, are in
 * job-log-writer-jobs.test.ts.
 */
import { jobLogs } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { newMessageId } from "@fleetback/protocol";
import { expect, it, vi } from "vitest";
import { eventually } from "../testing/eventually.js";
import { setUpJobLogWriter } from "../testing/job-log-writer-setup.js";
import { spyOnTableWrites } from "../testing/table-writes.js";
import { MAX_LOG_LINE_CHARS } from "./job-log-bounds.js";
import { EPILOGUE_LINES } from "./job-log-epilogues.js";
import { createJobLogWriter } from "./job-log-writer.js";

runDbSuite("job log writer", (getDb) => {
  const setUp = (options?: { batchLines?: number }) => setUpJobLogWriter(getDb(), options);

  it("holds lines until the flush timer or a full batch, then stores them in one statement", async () => {
    const { deps, host, timers, writer, line, stored } = await setUp();
    const writes = spyOnTableWrites(deps.db, jobLogs);
    const batches = () => writes.count();
    writer.append(host.id, line("a"));
    writer.append(host.id, line("b"));
    await eventually(
      () => timers.pending(),
      (n) => n === 1,
      { what: "flush timer armed" },
    );
    expect(await stored()).toEqual([]);
    timers.runAll();
    await eventually(stored, (rows) => rows.length === 2);
    expect(batches()).toBe(1);

    // Five more fill a batch: stored without any timer firing.
    for (const text of ["c", "d", "e", "f", "g"]) {
      writer.append(host.id, line(text));
    }
    const rows = await eventually(stored, (all) => all.length === 7);
    expect(batches()).toBe(2);
    expect(rows.map((row) => [row.seq, row.line])).toEqual([
      [1, "a"],
      [2, "b"],
      [3, "c"],
      [4, "d"],
      [5, "e"],
      [6, "f"],
      [7, "g"],
    ]);
    await writer.close();
  });

  it("emits each line with its seq, and drops lines for another host's job", async () => {
    const { host, other, job, events, writer, line, stored } = await setUp();
    const seen: Array<[number, string]> = [];
    events.on("job.log", (event) => seen.push([event.seq, event.line]));
    writer.append(other.host.id, line("forged"));
    await writer.finish(other.host.id, job.id);
    writer.append(host.id, line("real"));
    await writer.finish(host.id, job.id);
    expect((await stored()).map((row) => row.line)).toEqual(["real"]);
    expect(seen).toEqual([[1, "real"]]);
  });

  it("a line from another host for this job does not hide the owner's lines (state keyed by host and job)", async () => {
    const { host, other, job, writer, line, stored } = await setUp();
    // The forger never finishes the job: its claim must not outlive its own lines.
    writer.append(other.host.id, line("forged"));
    writer.append(host.id, line("real"));
    await writer.finish(host.id, job.id);
    expect((await stored()).map((row) => row.line)).toEqual(["real"]);
    await writer.close();
  });

  it("2,000 lines for random job ids hold no state afterwards and log one warning", async () => {
    const { deps, other, writer } = await setUp();
    const warn = vi.spyOn(deps.log, "warn");
    for (let i = 0; i < 2000; i += 1) {
      writer.append(other.host.id, {
        job_id: newMessageId(),
        stream: "stdout",
        line: `x${i}`,
        ts: "2026-11-21T12:00:00Z",
      });
    }
    await eventually(
      () => writer.heldJobs(),
      (n) => n === 0,
      { what: "every owner check done and forgotten", timeoutMs: 20_000 },
    );
    const warnings = warn.mock.calls.filter(([, msg]) => String(msg).includes("another host"));
    expect(warnings).toHaveLength(1);
    await writer.close();
  });

  it("continues after the highest stored seq when a job's state is new", async () => {
    const { host, job, writer, line, stored } = await setUp();
    writer.append(host.id, line("one"));
    await writer.finish(host.id, job.id);
    writer.append(host.id, line("two"));
    await writer.finish(host.id, job.id);
    expect((await stored()).map((row) => [row.seq, row.line])).toEqual([
      [1, "one"],
      [2, "two"],
    ]);
  });

  it("stores what the agent logs after the job's result as its epilogue: after its lines, never streamed", async () => {
    const { host, job, events, writer, line, stored } = await setUp();
    const seen: number[] = [];
    events.on("job.log", (event) => seen.push(event.seq));
    writer.append(host.id, line("one"));
    writer.append(host.id, line("two"));
    const finishing = writer.finish(host.id, job.id);
    writer.append(host.id, line("while it ends"));
    expect(await finishing).toBe(2);
    writer.append(host.id, line("after it ended"));
    await writer.close();
    expect((await stored()).map((row) => [row.seq, row.line])).toEqual([
      [1, "one"],
      [2, "two"],
      [3, "while it ends"],
      [4, "after it ended"],
    ]);
    expect(seen).toEqual([1, 2]);
  });

  it("bounds an epilogue, ends a job without lines at 0, and takes none for another host's job", async () => {
    const { host, other, job, writer, line, stored } = await setUp();
    expect(await writer.finish(other.host.id, job.id)).toBeUndefined();
    writer.append(other.host.id, line("forged"));
    expect(await writer.finish(host.id, job.id)).toBe(0);
    for (let i = 0; i < EPILOGUE_LINES + 10; i += 1) {
      writer.append(host.id, line(`after ${i}`));
    }
    await writer.close();
    const rows = await stored();
    expect(rows).toHaveLength(EPILOGUE_LINES);
    expect(rows.map((row) => row.line)).not.toContain("forged");
    expect(rows.at(-1)).toMatchObject({ seq: EPILOGUE_LINES, line: `after ${EPILOGUE_LINES - 1}` });
  });

  it("stores lines with tabs, backslashes, carriage returns and a literal \\N exactly", async () => {
    const { host, job, writer, line, stored } = await setUp();
    const texts = ["a\tb", "C:\\restic\\cache", "\\N", "progress\r42%", "naïve ✓ 日本", ""];
    for (const text of texts) {
      writer.append(host.id, line(text));
    }
    await writer.finish(host.id, job.id);
    const rows = await stored();
    expect(rows.map((row) => row.line)).toEqual(texts);
    expect(rows.map((row) => row.ts.toISOString())).toEqual(texts.map(() => "2026-11-21T12:00:00.000Z"));
  });

  it("takes a backlog of one job in full statements of statementLines, in order", async () => {
    const { deps, host, job, events, timers, line, stored } = await setUp();
    const writer = createJobLogWriter({
      db: deps.db,
      log: deps.log,
      events,
      timers,
      batchLines: 4,
      statementLines: 8,
    });
    const writes = spyOnTableWrites(deps.db, jobLogs);
    // All ten wait for the job's owner check, then go in as one backlog: eight, then two (not
    // three statements of at most four, which a job alone in a backlog once got).
    for (let i = 0; i < 10; i += 1) {
      writer.append(host.id, line(`l${i}`));
    }
    await writer.finish(host.id, job.id);
    expect(writes.count()).toBe(2);
    expect((await stored()).map((row) => row.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("a statement one row fails is written again in chunks of batchLines: only that row's chunk is lost", async () => {
    const { deps, host, job, timers, events, line, stored } = await setUp();
    const writer = createJobLogWriter({ db: deps.db, log: deps.log, events, timers, batchLines: 5 });
    for (let i = 1; i <= 12; i += 1) {
      // A stream the table's CHECK refuses (the protocol would never let one through).
      writer.append(host.id, i === 7 ? { ...line(`l${i}`), stream: "bogus" as "stdout" } : line(`l${i}`));
    }
    const writes = spyOnTableWrites(deps.db, jobLogs);
    await writer.finish(host.id, job.id);
    // The statement of twelve, then its chunks: 1-5, 6-10 (lost with line 7), 11-12.
    expect(writes.count()).toBe(4);
    expect((await stored()).map((row) => row.line)).toEqual(["l1", "l2", "l3", "l4", "l5", "l11", "l12"]);
  });

  it("cuts long lines and keeps a job's first and last lines, with one line saying how many went", async () => {
    const { deps, host, job, events, stored } = await setUp();
    const writer = createJobLogWriter({ db: deps.db, log: deps.log, events, headLines: 4, tailLines: 3 });
    const emitted: number[] = [];
    events.on("job.log", (event) => emitted.push(event.seq));
    // A host ignoring the agent's own cut: 900 KB lines, as in the report of issue 34.
    const huge = "x".repeat(900_000);
    for (let i = 0; i < 12; i += 1) {
      writer.append(host.id, {
        job_id: job.id,
        stream: "stdout",
        line: `${i}:${huge}`,
        ts: "2026-11-21T12:00:00Z",
      });
    }
    await writer.finish(host.id, job.id);
    const rows = await stored();
    expect(rows.map((row) => row.line.split(":")[0])).toEqual([
      "0",
      "1",
      "2",
      "3",
      "[… 5 lines dropped by the server",
      "9",
      "10",
      "11",
    ]);
    expect(rows[4]?.line).toBe(
      "[… 5 lines dropped by the server: a job keeps its first 4 and last 3 lines …]",
    );
    expect(rows.map((row) => row.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(emitted).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const row of [...rows.slice(0, 4), ...rows.slice(5)]) {
      expect(row.line.length).toBeLessThan(MAX_LOG_LINE_CHARS + 100);
      expect(row.line).toMatch(/ \[… \d+ more characters cut by the server\]$/);
    }
    // Lines under the limit, as a well-behaved agent sends them (8 KiB and its marker), stay whole.
    const fine = `${"y".repeat(8 * 1024)} [… 10 more characters]`;
    const again = createJobLogWriter({ db: deps.db, log: deps.log, events });
    again.append(host.id, { job_id: job.id, stream: "stderr", line: fine, ts: "2026-11-21T12:00:00Z" });
    await again.finish(host.id, job.id);
    expect((await stored()).at(-1)?.line).toBe(fine);
  });
});

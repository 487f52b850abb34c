import { jobLogs } from "@fleetback/db";
import { asc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { JobEventMap } from "../jobs/job-events.js";
import { eventually } from "../testing/eventually.js";
import { readJob, seedHost, seedJob } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { spyOnTableWrites } from "../testing/table-writes.js";
import { connectAgent, connectSettledAgent } from "../testing/test-agent.js";
import { startTestServer } from "../testing/test-server.js";

runServerSuite("agent channel: job reports", (server) => {
  const connected = (token: string, runningJobIds: string[] = []) =>
    connectSettledAgent(server, token, { running_job_ids: runningJobIds });

  const now = () => server.deps.clock.now().toISOString();

  describe("job reports", () => {
    it("moves a job through started, progress and finished, and tells listeners", async () => {
      const { host, token } = await seedHost(server.deps);
      const job = await seedJob(server.deps, { hostId: host.id, kind: "check", actorKind: "user" });
      const seen: Array<[string, unknown]> = [];
      const offs = (["job.updated", "job.log", "job.finished"] as const).map((name) =>
        server.deps.jobEvents.on(name, (event: JobEventMap[typeof name]) => {
          if (event.jobId === job.id) {
            seen.push([name, event]);
          }
        }),
      );
      try {
        const agent = await connected(token);
        const startedAt = now();
        agent.send("job.started", { job_id: job.id, kind: "check", started_at: startedAt });
        const progress = { job_id: job.id, percent_done: 0.25, files_done: 1, bytes_done: 10 };
        agent.send("job.progress", progress);
        agent.send("job.progress", { ...progress, percent_done: 0.5 });
        await eventually(
          () => seen.filter(([name]) => name === "job.updated").length,
          (n) => n === 3,
        );
        await server.channel.idle();
        // Two reports within one second: the live stream saw both, the row keeps the first.
        expect(await readJob(server.deps, job.id)).toMatchObject({
          status: "running",
          startedAt: new Date(startedAt),
          progress,
        });
        server.deps.clock.advance(1_000);
        agent.send("job.progress", { ...progress, percent_done: 0.75 });
        await eventually(
          async () => (await readJob(server.deps, job.id))?.progress?.percent_done,
          (done) => done === 0.75,
        );

        agent.send("job.finished", {
          job_id: job.id,
          status: "succeeded",
          exit_code: 0,
          summary: { files_new: 3 },
        });
        // The row changes before alerts are evaluated and listeners told: wait for the event.
        await eventually(
          () => seen.at(-1)?.[0],
          (name) => name === "job.finished",
        );
        expect(await readJob(server.deps, job.id)).toMatchObject({
          exitCode: 0,
          error: null,
          summary: { files_new: 3 },
          finishedAt: server.deps.clock.now(),
        });
        expect(seen.at(-1)).toEqual([
          "job.finished",
          expect.objectContaining({ status: "succeeded", exitCode: 0, hostId: host.id }),
        ]);
        // A repeated finish does not rewrite the result.
        agent.send("job.finished", { job_id: job.id, status: "failed", exit_code: 1 });
        await server.channel.idle();
        await eventually(
          () => server.deps.logLines.some((line) => line.includes("job.finished for no active job")),
          Boolean,
        );
        expect((await readJob(server.deps, job.id))?.status).toBe("succeeded");
        await agent.close();
      } finally {
        for (const off of offs) {
          off();
        }
      }
    });

    it("stores a NUL or a lone surrogate from the host as U+FFFD instead of failing the write", async () => {
      const { host, token } = await seedHost(server.deps);
      const job = await seedJob(server.deps, { hostId: host.id, kind: "backup", actorKind: "user" });
      const agent = await connected(token);
      agent.send("job.started", { job_id: job.id, kind: "backup", started_at: now() });
      agent.send("job.progress", {
        job_id: job.id,
        percent_done: 0.5,
        files_done: 1,
        bytes_done: 1,
        current_file: "/srv/a\u0000b\uD800",
      });
      agent.send("log.stream", { job_id: job.id, stream: "stderr", line: "bad \u0000 name", ts: now() });
      agent.send("job.finished", {
        job_id: job.id,
        status: "failed",
        exit_code: 1,
        error: "cannot read /srv/\u0000",
        summary: { "odd\u0000key": "\uDC00" },
      });
      await eventually(
        async () => (await readJob(server.deps, job.id))?.status,
        (status) => status === "failed",
      );
      expect(await readJob(server.deps, job.id)).toMatchObject({
        progress: { current_file: "/srv/a\uFFFDb\uFFFD" },
        error: "cannot read /srv/\uFFFD",
        summary: { "odd\uFFFDkey": "\uFFFD" },
      });
      await eventually(
        async () =>
          (await server.deps.db.select().from(jobLogs).where(eq(jobLogs.jobId, job.id))).map((l) => l.line),
        (lines) => lines.includes("bad \uFFFD name"),
      );
      await agent.close();
    });

    it("ignores reports about another host's job", async () => {
      const owner = await seedHost(server.deps);
      const other = await seedHost(server.deps, { name: "db-1" });
      const job = await seedJob(
        server.deps,
        { hostId: owner.host.id, kind: "backup", actorKind: "user" },
        { status: "running", startedAt: new Date("2026-11-21T11:00:00Z") },
      );
      const intruder = await connected(other.token, [job.id]);
      intruder.send("job.started", { job_id: job.id, kind: "backup", started_at: now() });
      intruder.send("job.progress", { job_id: job.id, percent_done: 0.9, files_done: 9, bytes_done: 9 });
      intruder.send("log.stream", { job_id: job.id, stream: "stdout", line: "forged", ts: now() });
      intruder.send("job.finished", { job_id: job.id, status: "failed", exit_code: 2, error: "forged" });
      await eventually(
        () => server.deps.logLines.filter((line) => line.includes(job.id) && line.includes("ignored")).length,
        (n) => n >= 2,
      );
      await server.channel.idle();
      expect(await readJob(server.deps, job.id)).toMatchObject({
        status: "running",
        startedAt: new Date("2026-11-21T11:00:00Z"),
        progress: null,
        error: null,
        finishedAt: null,
      });
      const lines = await server.deps.db.select().from(jobLogs).where(eq(jobLogs.jobId, job.id));
      expect(lines).toEqual([]);
      await intruder.close();
    });

    it("stores log lines in batches with increasing seq, continuing after a restart", async () => {
      const { host, token } = await seedHost(server.deps);
      const job = await seedJob(
        server.deps,
        { hostId: host.id, kind: "backup", actorKind: "user" },
        { status: "running" },
      );
      const writes = spyOnTableWrites(server.deps.db, jobLogs);
      try {
        // A first server process stores three lines, then goes away.
        const before = await startTestServer({ deps: server.deps });
        const early = await connectAgent(before.wsUrl, token);
        early.hello({ running_job_ids: [job.id] });
        await early.waitFor((frame) => frame.type === "schedule.set");
        for (let i = 1; i <= 3; i++) {
          early.send("log.stream", { job_id: job.id, stream: "stderr", line: `early ${i}`, ts: now() });
        }
        await eventually(
          () => server.deps.db.select().from(jobLogs).where(eq(jobLogs.jobId, job.id)),
          (rows) => rows.length === 3,
        );
        await before.close();

        const agent = await connected(token, [job.id]);
        for (let i = 1; i <= 450; i++) {
          agent.send("log.stream", { job_id: job.id, stream: "stdout", line: `line ${i}`, ts: now() });
        }
        agent.send("job.finished", { job_id: job.id, status: "succeeded", exit_code: 0 });
        await eventually(
          async () => (await readJob(server.deps, job.id))?.status,
          (status) => status === "succeeded",
        );
        const rows = await server.deps.db
          .select()
          .from(jobLogs)
          .where(eq(jobLogs.jobId, job.id))
          .orderBy(asc(jobLogs.seq));
        expect(rows.map((row) => row.seq)).toEqual(Array.from({ length: 453 }, (_, i) => i + 1));
        expect(rows.slice(0, 4).map((row) => row.line)).toEqual(["early 1", "early 2", "early 3", "line 1"]);
        expect(rows.at(-1)?.line).toBe("line 450");
        const batches = writes.count();
        // The early lines, then the rest in one or more (a job alone in a backlog goes up to 2,000
        // lines an insert); how many the 250 ms timer adds depends on the machine's pace, but it is
        // never one insert per line (job-log-writer.test.ts pins the exact rule).
        expect(batches).toBeGreaterThanOrEqual(2);
        expect(batches).toBeLessThan(453 / 10);
        await agent.close();
      } finally {
        writes.restore();
      }
    });
  });
});

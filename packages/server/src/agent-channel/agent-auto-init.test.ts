import { type Job, jobs } from "@fleetback/db";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { NEVER_RECEIVED_REASON } from "../jobs/reconcile-jobs.js";
import { eventually } from "../testing/eventually.js";
import { bindCredentials, readJob, seedHost, seedJob } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { connectAgent, connectSettledAgent } from "../testing/test-agent.js";

const repo = { url: "rest:https://backup.example:8000/web-1", password: "repo-secret-1" };

runServerSuite("agent channel: auto-init and reconciliation", (server) => {
  const connected = (token: string, runningJobIds: string[] = []) =>
    connectSettledAgent(server, token, { running_job_ids: runningJobIds });

  const jobsOf = (hostId: string, kind: Job["kind"]) =>
    server.deps.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.hostId, hostId), eq(jobs.kind, kind)));

  const now = () => server.deps.clock.now().toISOString();

  describe("auto-init", () => {
    it("dispatches exactly one init when two connections say hello at once", async () => {
      const { host, token } = await seedHost(server.deps);
      await bindCredentials(server.deps, host.id, { repo });
      const [a, b] = await Promise.all([
        connectAgent(server.wsUrl, token),
        connectAgent(server.wsUrl, token),
      ]);
      a.hello();
      b.hello();
      await Promise.all(
        [a, b].map((agent) => agent.waitFor((f) => f.type === "schedule.set").catch(() => undefined)),
      );
      await server.channel.idle();

      const runs = [...a.frames, ...b.frames].filter((frame) => frame.type === "command.run");
      expect(runs).toHaveLength(1);
      const [init] = await jobsOf(host.id, "init");
      expect(runs[0]?.payload).toEqual({ job_id: init?.id, kind: "init", requires_admin_creds: false });
      expect(init).toMatchObject({ status: "queued", actorKind: "system" });
      expect(await jobsOf(host.id, "init")).toHaveLength(1);
      await Promise.all([a.close(), b.close()]);
    });

    for (const outcome of ["succeeded", "failed"] as const) {
      it(`does not init again after an init that ${outcome}`, async () => {
        const { host, token } = await seedHost(server.deps);
        await bindCredentials(server.deps, host.id, { repo });
        const first = await connected(token);
        const run = await first.waitFor((frame) => frame.type === "command.run");
        const jobId = (run.payload as { job_id: string }).job_id;
        first.send("job.started", { job_id: jobId, kind: "init", started_at: now() });
        first.send("job.finished", {
          job_id: jobId,
          status: outcome,
          exit_code: outcome === "succeeded" ? 0 : 1,
        });
        await eventually(
          async () => (await readJob(server.deps, jobId))?.status,
          (status) => status === outcome,
        );
        await first.close();

        const second = await connected(token);
        expect(second.frames.filter((frame) => frame.type === "command.run")).toEqual([]);
        expect(await jobsOf(host.id, "init")).toHaveLength(1);
        await second.close();
      });
    }
  });

  describe("reconciliation", () => {
    it("marks running jobs the agent does not report as lost, and adopts queued ones it does", async () => {
      const { host, token } = await seedHost(server.deps);
      const gone = await seedJob(
        server.deps,
        { hostId: host.id, kind: "backup", actorKind: "user" },
        { status: "running" },
      );
      const kept = await seedJob(
        server.deps,
        { hostId: host.id, kind: "check", actorKind: "user" },
        { status: "running" },
      );
      const started = await seedJob(server.deps, { hostId: host.id, kind: "forget", actorKind: "system" });
      const waiting = await seedJob(server.deps, { hostId: host.id, kind: "prune", actorKind: "system" });
      // Sent a minute ago into a socket that died: the agent never had it.
      const unread = await seedJob(
        server.deps,
        { hostId: host.id, kind: "unlock", actorKind: "user" },
        { createdAt: new Date(server.deps.clock.now().getTime() - 60_000) },
      );
      const finished: string[] = [];
      const off = server.deps.jobEvents.on("job.finished", (event) => {
        if (event.hostId === host.id) {
          finished.push(`${event.jobId}:${event.status}`);
        }
      });
      try {
        const agent = await connected(token, [kept.id, started.id]);
        expect(await readJob(server.deps, gone.id)).toMatchObject({
          status: "lost",
          error: "agent reconnected without this job",
          finishedAt: server.deps.clock.now(),
        });
        expect((await readJob(server.deps, kept.id))?.status).toBe("running");
        expect(await readJob(server.deps, started.id)).toMatchObject({
          status: "running",
          startedAt: server.deps.clock.now(),
        });
        expect((await readJob(server.deps, waiting.id))?.status).toBe("queued");
        expect(await readJob(server.deps, unread.id)).toMatchObject({
          status: "lost",
          error: NEVER_RECEIVED_REASON,
        });
        expect(finished.sort()).toEqual([`${gone.id}:lost`, `${unread.id}:lost`].sort());

        agent.send("heartbeat", { running_job_ids: [started.id] });
        await eventually(
          async () => (await readJob(server.deps, kept.id))?.status,
          (status) => status === "lost",
        );
        expect((await readJob(server.deps, kept.id))?.error).toBe(
          "agent no longer reports this job as running",
        );
        expect((await readJob(server.deps, started.id))?.status).toBe("running");
        // Two minutes on, a queued job the heartbeats never mention was not received either.
        expect((await readJob(server.deps, waiting.id))?.status).toBe("queued");
        server.deps.clock.advance(121_000);
        agent.send("heartbeat", { running_job_ids: [started.id] });
        await eventually(
          async () => (await readJob(server.deps, waiting.id))?.status,
          (status) => status === "lost",
        );
        await agent.close();
      } finally {
        off();
      }
    });
  });
});

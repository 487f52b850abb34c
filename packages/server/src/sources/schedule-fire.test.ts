import { jobs, pendingRuns } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { ulid } from "ulidx";
import { expect, it } from "vitest";
import { pushScheduleSet } from "../hosts/host-push.js";
import { eventually } from "../testing/eventually.js";
import { createTestGroup, seedAuditContext, seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { connectOnlineAgent } from "../testing/test-agent.js";
import { handleScheduleFire } from "./schedule-fire.js";
import { createSchedule } from "./schedules.js";

runServerSuite("schedule.fire", (server) => {
  async function connectedHost(name: string) {
    const { host, token } = await seedHost(server.deps, { name });
    const agent = await connectOnlineAgent(server.wsUrl, token, { hostname: name });
    return { host, agent };
  }

  it("dispatches one backup per member group with actor schedule; the agent got the new schedule.set", async () => {
    const { deps } = server;
    const { host, agent } = await connectedHost("fire-1");
    const etc = await createTestGroup(deps, host.id, { excludes: ["*.swp"] });
    const srv = await createTestGroup(deps, host.id, { name: "srv", includes: ["/srv"] });
    const schedule = await createSchedule(deps, await seedAuditContext(deps), host.id, {
      cron: "0 2 * * *",
      source_group_ids: [etc.id, srv.id],
    });
    await pushScheduleSet(deps, host.id);
    const set = await agent.waitFor(
      (f) => f.type === "schedule.set" && (f.payload as { version: number }).version === 1,
    );
    expect(set.payload).toEqual({
      version: 1,
      schedules: [
        { id: schedule.id, cron: "0 2 * * *", enabled: true, source_groups: [etc.id, srv.id].sort() },
      ],
    });
    const from = agent.frames.length;
    agent.send("schedule.fire", { schedule_id: schedule.id, scheduled_at: "2026-11-22T02:00:00Z" });
    await agent.waitFor(
      (f) => f.type === "command.run" && (f.payload as { tag?: string }).tag === "srv",
      5_000,
      from,
    );
    const runs = agent.frames.slice(from).filter((f) => f.type === "command.run");
    expect(runs.map((f) => f.payload)).toEqual([
      expect.objectContaining({ kind: "backup", tag: "etc", includes: ["/etc"], excludes: ["*.swp"] }),
      expect.objectContaining({ kind: "backup", tag: "srv", includes: ["/srv"], excludes: [] }),
    ]);
    const stored = await deps.db.select().from(jobs).where(eq(jobs.hostId, host.id));
    expect(stored.map((job) => [job.actorKind, job.scheduledId, job.sourceGroupId]).sort()).toEqual(
      [
        ["schedule", schedule.id, etc.id],
        ["schedule", schedule.id, srv.id],
      ].sort(),
    );

    // A transient failure reported over the socket queues a retry of that group.
    const etcJob = String((runs[0]?.payload as { job_id?: string } | undefined)?.job_id);
    agent.send("job.finished", {
      job_id: etcJob,
      status: "failed",
      exit_code: 1,
      error: "unable to create lock",
    });
    const [queued] = await eventually(
      () => deps.db.select().from(pendingRuns).where(eq(pendingRuns.lastJobId, etcJob)),
      (rows) => rows.length === 1,
    );
    expect(queued).toMatchObject({
      sourceGroupId: etc.id,
      scheduleId: schedule.id,
      actorKind: "schedule",
      attempt: 0,
    });

    // The same slot again (or an older one) dispatches nothing; the next slot does.
    const before = (await deps.db.select().from(jobs).where(eq(jobs.hostId, host.id))).length;
    const repeat = await handleScheduleFire(deps, host.id, {
      schedule_id: schedule.id,
      scheduled_at: "2026-11-22T02:00:00Z",
    });
    const older = await handleScheduleFire(deps, host.id, {
      schedule_id: schedule.id,
      scheduled_at: "2026-11-21T02:00:00Z",
    });
    expect([repeat, older]).toEqual([[], []]);
    expect((await deps.db.select().from(jobs).where(eq(jobs.hostId, host.id))).length).toBe(before);
    const next = await handleScheduleFire(deps, host.id, {
      schedule_id: schedule.id,
      scheduled_at: "2026-11-23T02:00:00Z",
    });
    expect(next.map((outcome) => outcome.outcome)).toEqual(["dispatched", "dispatched"]);
    await agent.close();
  });

  it("two fires of one slot at once dispatch its backup once", async () => {
    const { deps } = server;
    const { host, agent } = await connectedHost("fire-4");
    const group = await createTestGroup(deps, host.id);
    const schedule = await createSchedule(deps, await seedAuditContext(deps), host.id, {
      cron: "0 2 * * *",
      source_group_ids: [group.id],
    });
    const fire = { schedule_id: schedule.id, scheduled_at: "2026-11-22T02:00:00Z" };
    const outcomes = await Promise.all([
      handleScheduleFire(deps, host.id, fire),
      handleScheduleFire(deps, host.id, fire),
    ]);
    expect(outcomes.map((list) => list.map((o) => o.outcome)).sort()).toEqual([[], ["dispatched"]]);
    expect(await deps.db.select().from(jobs).where(eq(jobs.hostId, host.id))).toHaveLength(1);
    await agent.close();
  });

  it("dispatches nothing for a disabled schedule, another host's schedule or an unknown one", async () => {
    const { deps } = server;
    const { host, agent } = await connectedHost("fire-2");
    const other = await seedHost(deps, { name: "fire-3" });
    const mine = await createTestGroup(deps, host.id);
    const theirs = await createTestGroup(deps, other.host.id);
    const disabled = await createSchedule(deps, await seedAuditContext(deps), host.id, {
      cron: "0 2 * * *",
      enabled: false,
      source_group_ids: [mine.id],
    });
    const foreign = await createSchedule(deps, await seedAuditContext(deps), other.host.id, {
      cron: "0 2 * * *",
      source_group_ids: [theirs.id],
    });
    for (const id of [disabled.id, foreign.id, ulid()]) {
      agent.send("schedule.fire", { schedule_id: id, scheduled_at: "2026-11-22T02:00:00Z" });
    }
    await eventually(
      () => deps.logLines.filter((line) => line.includes("schedule.fire for")).length,
      (count) => count >= 3,
    );
    await server.channel.idle();
    expect(agent.frames.filter((f) => f.type === "command.run")).toEqual([]);
    expect(await deps.db.select().from(jobs).where(eq(jobs.hostId, host.id))).toEqual([]);
    expect(await deps.db.select().from(jobs).where(eq(jobs.hostId, other.host.id))).toEqual([]);
    await agent.close();
  });
});

import { runDbSuite } from "@fleetback/db/testing";
import { expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { createIds } from "../ids.js";
import { seedHost, seedJob } from "../testing/seed.js";
import { loadJobTimeline } from "./job-timeline.js";

const NOW = new Date("2026-11-21T12:00:00Z");
const at = (hoursAgo: number) => new Date(NOW.getTime() - hoursAgo * 3_600_000);

runDbSuite("job timeline", (getDb) => {
  it("keeps the jobs that ran in the last 24 h, problem hosts first, then active ones, capped", async () => {
    const clock = createManualClock(NOW);
    const deps = { db: getDb(), clock, ids: createIds() };
    /** A job created (and so given its ULID) when it started. */
    async function ran(hostId: string, startedHoursAgo: number, fields: Parameters<typeof seedJob>[2]) {
      clock.set(at(startedHoursAgo));
      const job = await seedJob(
        deps,
        { hostId, kind: "backup", actorKind: "system" },
        {
          startedAt: at(startedHoursAgo),
          ...fields,
        },
      );
      clock.set(NOW);
      return job;
    }
    const alpha = (await seedHost(deps, { name: "alpha" })).host;
    const busy = (await seedHost(deps, { name: "busy" })).host;
    const idle = (await seedHost(deps, { name: "idle" })).host;
    const zulu = (await seedHost(deps, { name: "zulu-failed" })).host;
    const late = (await seedHost(deps, { name: "late" })).host;

    const done = await ran(busy.id, 3, { status: "succeeded", finishedAt: at(2.5) });
    const running = await ran(busy.id, 0.5, { status: "running" });
    // Started three days ago and still running: an active job is shown whatever its age.
    const stuck = await ran(busy.id, 72, { status: "running" });
    await ran(busy.id, 30, { status: "succeeded", finishedAt: at(29) });
    // Created but never started: nothing to draw.
    await ran(busy.id, 1, { status: "queued", startedAt: null });
    const failed = await ran(zulu.id, 5, { status: "failed", finishedAt: at(4) });
    // Started before the window, ended inside it.
    const straddling = await ran(alpha.id, 26, { status: "succeeded", finishedAt: at(23) });

    const timeline = await loadJobTimeline(
      getDb(),
      NOW,
      { overdue: new Set([late.id]), failing: new Set([alpha.id]), protection: new Map() },
      4,
    );
    expect(timeline.from).toEqual(at(24));
    expect(timeline.totalHosts).toBe(5);
    expect(timeline.hosts.map((h) => h.name)).toEqual(["alpha", "late", "zulu-failed", "busy"]);
    const byName = new Map(timeline.hosts.map((h) => [h.name, h]));
    expect(byName.get("busy")?.jobs.map((j) => j.id)).toEqual([stuck.id, done.id, running.id]);
    expect(byName.get("zulu-failed")).toMatchObject({ failedJobs: true, failing: false, overdue: false });
    expect(byName.get("zulu-failed")?.jobs.map((j) => j.id)).toEqual([failed.id]);
    expect(byName.get("alpha")).toMatchObject({
      failing: true,
      jobs: [expect.objectContaining({ id: straddling.id })],
    });
    expect(byName.get("late")).toMatchObject({ overdue: true, jobs: [] });
    expect(timeline.hosts.some((h) => h.id === idle.id)).toBe(false);
  });
});

/**
 * @module sources/schedule-change
 * One change to a host's schedules as the sources page and the JSON API both make it: the change
 * audits itself and bumps the schedule version in its transaction; only after it committed is the
 * new set pushed, so the agent never gets a version the database does not hold.
 */
import type { ServerDeps } from "../deps.js";
import { pushScheduleSet } from "../hosts/host-push.js";
import type { ScheduleView } from "./schedules.js";

export async function changeSchedule(
  deps: Pick<ServerDeps, "db" | "hub">,
  hostId: string,
  run: () => Promise<ScheduleView>,
): Promise<{ schedule: ScheduleView; pushed: boolean }> {
  const schedule = await run();
  const pushed = await pushScheduleSet(deps, hostId);
  return { schedule, pushed };
}

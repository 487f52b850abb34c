/**
 * @module sources/schedule-fire
 * A `schedule.fire` of an existing, enabled schedule of
 * the sending host dispatches one backup per member group, with actor_kind `schedule`. Anything
 * else is logged and dropped: an agent can never start another host's backups. A fire is acted on
 * once per slot: claiming `last_fired_at` is one conditional UPDATE, so a repeated fire (two
 * agents sharing a token, the agent's fire ledger sending it again) of the same or an earlier slot
 * dispatches nothing. The claim commits with the slot's job rows, never without them.
 */
import { hosts, scheduleSourceGroups, schedules, sourceGroups } from "@fleetback/db";
import type { ScheduleFire } from "@fleetback/protocol";
import { and, asc, eq, isNull, lt, or } from "drizzle-orm";
import { startJobs } from "../jobs/start-job.js";
import { type BackupDeps, type BackupOutcome, backupSpec, loadHostHooks } from "./dispatch-backup.js";

export async function handleScheduleFire(
  deps: BackupDeps,
  hostId: string,
  fire: ScheduleFire,
): Promise<BackupOutcome[]> {
  const [schedule] = await deps.db
    .select()
    .from(schedules)
    .where(and(eq(schedules.id, fire.schedule_id), eq(schedules.hostId, hostId)));
  if (!schedule) {
    deps.log.warn(
      { host_id: hostId, schedule_id: fire.schedule_id },
      "schedule.fire for no schedule of this host; nothing dispatched",
    );
    return [];
  }
  const [pausedHost] = await deps.db
    .select({ paused: hosts.schedulesPaused })
    .from(hosts)
    .where(eq(hosts.id, hostId));
  if (!schedule.enabled || pausedHost?.paused === true) {
    deps.log.info(
      { host_id: hostId, schedule_id: schedule.id },
      "schedule.fire for a disabled schedule, or while the host's schedules are paused; ignored",
    );
    return [];
  }
  const slot = new Date(fire.scheduled_at);
  const request = {
    hostId,
    actorKind: "schedule" as const,
    scheduleId: schedule.id,
    offline: "queue" as const,
  };
  // Read before the claim: the slot's groups as the schedule has them when it fires.
  const groups = await deps.db
    .select({ group: sourceGroups })
    .from(scheduleSourceGroups)
    .innerJoin(sourceGroups, eq(sourceGroups.id, scheduleSourceGroups.sourceGroupId))
    .where(and(eq(scheduleSourceGroups.scheduleId, schedule.id), eq(sourceGroups.hostId, hostId)))
    .orderBy(asc(sourceGroups.name));
  const host = await loadHostHooks(deps, hostId);
  // The claim and the jobs commit together (start-job.ts): a server killed in between leaves
  // either the slot unclaimed (the agent's repeated firing runs it) or its jobs (ended lost if
  // never sent).
  const started = await startJobs(
    deps,
    groups.map(({ group }) => backupSpec(deps, request, group, host)),
    async (tx) => {
      const [claimed] = await tx
        .update(schedules)
        .set({ lastFiredAt: slot })
        .where(
          and(
            eq(schedules.id, schedule.id),
            or(isNull(schedules.lastFiredAt), lt(schedules.lastFiredAt, slot)),
          ),
        )
        .returning({ id: schedules.id });
      return claimed ? undefined : ("acted_on" as const);
    },
  );
  if ("declined" in started) {
    deps.log.warn(
      { host_id: hostId, schedule_id: schedule.id, scheduled_at: fire.scheduled_at },
      "schedule.fire for a slot already acted on; ignored",
    );
    return [];
  }
  return started.results.map((result, index): BackupOutcome => {
    if (result.ok) {
      return { outcome: "dispatched", jobId: result.job.id };
    }
    if (result.pendingRunId !== undefined) {
      return { outcome: "queued", pendingRunId: result.pendingRunId };
    }
    deps.log.warn(
      { host_id: hostId, schedule_id: schedule.id, source_group_id: groups[index]?.group.id },
      "scheduled backup not sent: host offline and the group allows no retries",
    );
    return { outcome: "offline" };
  });
}

/**
 * @module sources/schedule-fire
 * A `schedule.fire` of an existing, enabled schedule of
 * the sending host dispatches one backup per member group, with actor_kind `schedule`. Anything
 * else is logged and dropped: an agent can never start another host's backups. A fire is acted on
 * once per slot: claiming `last_fired_at` is one conditional UPDATE, so a repeated fire (two
 * agents sharing a token, a replayed frame) of the same or an earlier slot dispatches nothing.
 */
import { scheduleSourceGroups, schedules, sourceGroups } from "@fleetback/db";
import type { ScheduleFire } from "@fleetback/protocol";
import { and, asc, eq, isNull, lt, or } from "drizzle-orm";
import { type BackupDeps, type BackupOutcome, runBackup } from "./dispatch-backup.js";

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
  if (!schedule.enabled) {
    deps.log.info(
      { host_id: hostId, schedule_id: schedule.id },
      "schedule.fire for a disabled schedule; ignored",
    );
    return [];
  }
  const slot = new Date(fire.scheduled_at);
  const [claimed] = await deps.db
    .update(schedules)
    .set({ lastFiredAt: slot })
    .where(
      and(eq(schedules.id, schedule.id), or(isNull(schedules.lastFiredAt), lt(schedules.lastFiredAt, slot))),
    )
    .returning({ id: schedules.id });
  if (!claimed) {
    deps.log.warn(
      { host_id: hostId, schedule_id: schedule.id, scheduled_at: fire.scheduled_at },
      "schedule.fire for a slot already acted on; ignored",
    );
    return [];
  }
  const groups = await deps.db
    .select({ group: sourceGroups })
    .from(scheduleSourceGroups)
    .innerJoin(sourceGroups, eq(sourceGroups.id, scheduleSourceGroups.sourceGroupId))
    .where(and(eq(scheduleSourceGroups.scheduleId, schedule.id), eq(sourceGroups.hostId, hostId)))
    .orderBy(asc(sourceGroups.name));
  const outcomes: BackupOutcome[] = [];
  for (const { group } of groups) {
    const outcome = await runBackup(deps, { hostId, actorKind: "schedule", scheduleId: schedule.id }, group);
    if (outcome.outcome === "offline") {
      deps.log.warn(
        { host_id: hostId, schedule_id: schedule.id, source_group_id: group.id },
        "scheduled backup not sent: host offline and the group allows no retries",
      );
    }
    outcomes.push(outcome);
  }
  return outcomes;
}

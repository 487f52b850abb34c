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
import { type BackupDeps, type BackupOutcome, backupSpec, HOST_HOOK_COLUMNS } from "./dispatch-backup.js";

/**
 * The schedule with what the fire needs of its host, in one read: on the embedded database every
 * round trip waits behind every other host's, and at 02:00 a whole fleet fires at once.
 */
async function loadFiring(deps: BackupDeps, hostId: string, scheduleId: string) {
  const [row] = await deps.db
    .select({ schedule: schedules, paused: hosts.schedulesPaused, ...HOST_HOOK_COLUMNS })
    .from(schedules)
    .innerJoin(hosts, eq(hosts.id, schedules.hostId))
    .where(and(eq(schedules.id, scheduleId), eq(schedules.hostId, hostId)));
  if (row === undefined) {
    return undefined;
  }
  const { schedule, paused, ...host } = row;
  return { schedule, paused, host };
}

export async function handleScheduleFire(
  deps: BackupDeps,
  hostId: string,
  fire: ScheduleFire,
): Promise<BackupOutcome[]> {
  const firing = await loadFiring(deps, hostId, fire.schedule_id);
  if (!firing) {
    deps.log.warn(
      { host_id: hostId, schedule_id: fire.schedule_id },
      "schedule.fire for no schedule of this host; nothing dispatched",
    );
    return [];
  }
  const { schedule, host } = firing;
  if (!schedule.enabled || firing.paused) {
    deps.log.info(
      { host_id: hostId, schedule_id: schedule.id },
      "schedule.fire for a disabled schedule, or while the host's schedules are paused; ignored",
    );
    return [];
  }
  const slot = new Date(fire.scheduled_at);
  // A repeated fire (the agent's ledger sends an unanswered one again) mostly arrives after the
  // first one committed: answered from the read alone. The claim below still decides a race.
  if (schedule.lastFiredAt !== null && schedule.lastFiredAt >= slot) {
    return alreadyActedOn(deps, hostId, schedule.id, fire);
  }
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
    return alreadyActedOn(deps, hostId, schedule.id, fire);
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

function alreadyActedOn(deps: BackupDeps, hostId: string, scheduleId: string, fire: ScheduleFire): [] {
  deps.log.warn(
    { host_id: hostId, schedule_id: scheduleId, scheduled_at: fire.scheduled_at },
    "schedule.fire for a slot already acted on; ignored",
  );
  return [];
}

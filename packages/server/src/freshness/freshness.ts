/**
 * @module freshness/freshness
 * Is each source group protected? Judged from the repository's own snapshots (the newest one
 * carrying the group's tag, as the agent last reported them), never from job history, so a
 * schedule that never fired, one deleted on the host, or snapshots going to another repository all
 * show, whatever the jobs say.
 *
 * For a group with at least one enabled schedule, in the zone the agent's scheduler uses:
 *   base      = the newest snapshot for the tag, or, before the first one, when the group became
 *               scheduled (the later of the group's creation and its schedules' last change);
 *   dueAt     = the first fire after base: from then on a new snapshot is expected;
 *   grace     = the group's grace_seconds, or by default an hour;
 *   deadline  = dueAt + grace.
 * Grace counts from when the run was due, not from the last snapshot: counted from the snapshot,
 * a grace shorter than the schedule's interval (60 s on a 3-minute schedule) made every healthy
 * group overdue between two good runs. State: `overdue` from the deadline on, else `due` from
 * dueAt on, else `fresh`; but a group with no snapshot yet is `never` (never backed up) until its
 * first deadline, not `fresh`: nothing of it is protected, though nothing is late either. From the
 * first deadline on it is `overdue` like any other. A daily 02:00 backup is thus overdue at 03:00 after a night without a
 * snapshot. A group no enabled schedule fires, or whose host's schedules are paused, is
 * `unscheduled`: shown, never alerting.
 *
 * The whole fleet is read with one query (groups, hosts, the per-tag newest snapshot by key, the
 * enabled schedules aggregated per group in one pass, joined by hash rather than a subquery per
 * group: PGlite has no autovacuum, so the planner often has no statistics to pick well with);
 * the rest is arithmetic on cached cron expressions.
 */
import { type Database, executeRows } from "@fleetback/db";
import { sql } from "drizzle-orm";
import { type CronTimes, createCronTimes } from "./cron-times.js";

export type FreshnessState = "fresh" | "due" | "overdue" | "never" | "unscheduled";

/** The grace after the due time when the group sets none of its own. */
export const DEFAULT_GRACE_MS = 60 * 60 * 1000;

export interface GroupFreshness {
  hostId: string;
  hostName: string;
  groupId: string;
  groupName: string;
  state: FreshnessState;
  lastSnapshotAt: Date | null;
  /** The next fire of any of the group's schedules after now. */
  nextFireAt: Date | null;
  /** The first fire after the last snapshot (or after the group became scheduled). */
  dueAt: Date | null;
  /** Overdue from this instant on. */
  deadline: Date | null;
  /** Seconds past the deadline; 0 unless overdue. */
  overdueSeconds: number;
  /** The zone the schedules were read in: the agent's, or the server's when it reported none. */
  timeZone: string;
}

export interface FreshnessOptions {
  /** FLEETBACK_TZ: stands for the zone of an agent that reported none. */
  defaultTimeZone: string;
  hostId?: string | undefined;
  /** Reused across evaluations by a ticker; a fresh cache otherwise. */
  cronTimes?: CronTimes;
}

type GroupRow = {
  group_id: string;
  group_name: string;
  host_id: string;
  host_name: string;
  time_zone: string | null;
  grace_seconds: number | null;
  group_created_at: Date | string;
  latest_at: Date | string | null;
  schedules: Array<{ cron: string; changed_at: string }> | string | null;
};

const STATE_ORDER: Record<FreshnessState, number> = {
  overdue: 0,
  due: 1,
  never: 2,
  fresh: 3,
  unscheduled: 4,
};

function toDate(value: Date | string): Date {
  return value instanceof Date ? value : new Date(value);
}

function schedulesOf(row: GroupRow): Array<{ cron: string; changedAt: Date }> {
  const raw = typeof row.schedules === "string" ? JSON.parse(row.schedules) : row.schedules;
  if (!Array.isArray(raw)) {
    return [];
  }
  return raw.map((entry: { cron: string; changed_at: string }) => ({
    cron: entry.cron,
    changedAt: new Date(entry.changed_at),
  }));
}

/** One group's verdict; exported for the unit tests of the rules above. */
export function judgeGroup(
  input: {
    lastSnapshotAt: Date | null;
    groupCreatedAt: Date;
    graceSeconds: number | null;
    schedules: ReadonlyArray<{ cron: string; changedAt: Date }>;
    timeZone: string;
  },
  now: Date,
  times: CronTimes,
): Pick<GroupFreshness, "state" | "nextFireAt" | "dueAt" | "deadline" | "overdueSeconds"> {
  const unscheduled = {
    state: "unscheduled" as const,
    nextFireAt: null,
    dueAt: null,
    deadline: null,
    overdueSeconds: 0,
  };
  if (input.schedules.length === 0) {
    return unscheduled;
  }
  const scheduledSince = Math.max(
    input.groupCreatedAt.getTime(),
    Math.min(...input.schedules.map((s) => s.changedAt.getTime())),
  );
  const base = input.lastSnapshotAt ?? new Date(scheduledSince);
  let dueAt: Date | undefined;
  let nextFireAt: Date | undefined;
  for (const { cron } of input.schedules) {
    const first = times.nextAfter(cron, input.timeZone, base);
    if (first && (!dueAt || first < dueAt)) {
      dueAt = first;
    }
    const next = times.nextAfter(cron, input.timeZone, now);
    if (next && (!nextFireAt || next < nextFireAt)) {
      nextFireAt = next;
    }
  }
  if (!dueAt) {
    // Every schedule's expression is past its last date: nothing will ever be expected.
    return unscheduled;
  }
  const graceMs = input.graceSeconds !== null ? input.graceSeconds * 1000 : DEFAULT_GRACE_MS;
  const deadline = new Date(dueAt.getTime() + graceMs);
  const state =
    now >= deadline ? "overdue" : input.lastSnapshotAt === null ? "never" : now >= dueAt ? "due" : "fresh";
  return {
    state,
    nextFireAt: nextFireAt ?? null,
    dueAt,
    deadline,
    overdueSeconds: state === "overdue" ? Math.floor((now.getTime() - deadline.getTime()) / 1000) : 0,
  };
}

/**
 * Every group's freshness (or one host's), most urgent first: overdue by oldest snapshot, then
 * due, never backed up, fresh and unscheduled.
 */
export async function evaluateFreshness(
  db: Database,
  now: Date,
  options: FreshnessOptions,
): Promise<GroupFreshness[]> {
  const times = options.cronTimes ?? createCronTimes();
  const hostFilter = options.hostId === undefined ? sql`` : sql`where g.host_id = ${options.hostId}`;
  const scheduleFilter = options.hostId === undefined ? sql`` : sql`and s.host_id = ${options.hostId}`;
  const rows = await executeRows<GroupRow>(
    db,
    sql`select g.id as group_id, g.name as group_name, g.host_id, h.name as host_name,
               h.time_zone, g.grace_seconds, g.created_at as group_created_at, t.latest_at,
               sc.schedules
        from source_groups g
        join hosts h on h.id = g.host_id
        left join snapshot_tags t on t.host_id = g.host_id and t.tag = g.name
        left join (
          select m.source_group_id,
                 json_agg(json_build_object('cron', s.cron, 'changed_at', s.updated_at)) as schedules
          from schedule_source_groups m join schedules s on s.id = m.schedule_id
          where s.enabled ${scheduleFilter}
          group by m.source_group_id
        ) sc on sc.source_group_id = g.id and not h.schedules_paused
        ${hostFilter}`,
  );
  const judged = rows.map((row): GroupFreshness => {
    const timeZone = row.time_zone ?? options.defaultTimeZone;
    const lastSnapshotAt = row.latest_at === null ? null : toDate(row.latest_at);
    const verdict = judgeGroup(
      {
        lastSnapshotAt,
        groupCreatedAt: toDate(row.group_created_at),
        graceSeconds: row.grace_seconds,
        schedules: schedulesOf(row),
        timeZone,
      },
      now,
      times,
    );
    return {
      hostId: row.host_id,
      hostName: row.host_name,
      groupId: row.group_id,
      groupName: row.group_name,
      lastSnapshotAt,
      timeZone,
      ...verdict,
    };
  });
  return judged.sort(
    (a, b) =>
      STATE_ORDER[a.state] - STATE_ORDER[b.state] ||
      (a.lastSnapshotAt?.getTime() ?? 0) - (b.lastSnapshotAt?.getTime() ?? 0) ||
      a.hostName.localeCompare(b.hostName) ||
      a.groupName.localeCompare(b.groupName),
  );
}

/** The API shape (also used by the dashboard and the host's source groups). */
export function freshnessJson(group: GroupFreshness) {
  return {
    host_id: group.hostId,
    host_name: group.hostName,
    source_group_id: group.groupId,
    source_group_name: group.groupName,
    state: group.state,
    last_snapshot_at: group.lastSnapshotAt,
    due_at: group.dueAt,
    deadline: group.deadline,
    next_fire_at: group.nextFireAt,
    overdue_seconds: group.overdueSeconds,
    time_zone: group.timeZone,
  };
}

/** One host's groups by id, for pages and API answers that list them. */
export async function hostFreshness(
  deps: { db: Database; clock: { now(): Date }; config: { timeZone: string } },
  hostId: string,
): Promise<Map<string, GroupFreshness>> {
  const groups = await evaluateFreshness(deps.db, deps.clock.now(), {
    defaultTimeZone: deps.config.timeZone,
    hostId,
  });
  return new Map(groups.map((group) => [group.groupId, group]));
}

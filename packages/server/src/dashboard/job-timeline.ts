/**
 * @module dashboard/job-timeline
 * The jobs of the last 24 hours, per host, for the dashboard's timeline: every job that ran in
 * the window (started before now, and still active or finished inside it). Bounded twice: at most
 * TIMELINE_MAX_HOSTS rows, hosts with problems first, then hosts with activity, then the rest by
 * name; and at most TIMELINE_MAX_JOBS_PER_HOST bars per row, the newest.
 */
import {
  ACTIVE_JOB_STATUSES,
  type Database,
  type HostStatus,
  hosts,
  type JobKind,
  type JobStatus,
  jobs,
  sourceGroups,
} from "@fleetback/db";
import { and, asc, count, eq, gte, inArray, isNotNull, lt, lte, or, sql } from "drizzle-orm";
import { encodeTime } from "ulidx";
import type { HostProblems } from "../freshness/host-states.js";

export const TIMELINE_HOURS = 24;
export const TIMELINE_MAX_HOSTS = 50;
export const TIMELINE_MAX_JOBS_PER_HOST = 200;

const HOUR_MS = 3_600_000;
/** Ended jobs are looked up by id (a ULID of their creation time) from this long before the window. */
const LONGEST_JOB_MS = 24 * HOUR_MS;

export interface TimelineJob {
  id: string;
  kind: JobKind;
  status: JobStatus;
  groupName: string | null;
  startedAt: Date;
  finishedAt: Date | null;
}

export interface TimelineHost {
  id: string;
  name: string;
  status: HostStatus;
  overdue: boolean;
  failing: boolean;
  /** A failed or lost job in the window. */
  failedJobs: boolean;
  /** Oldest first. */
  jobs: TimelineJob[];
}

export interface JobTimeline {
  from: Date;
  to: Date;
  hosts: TimelineHost[];
  /** Every host of the fleet; more than hosts.length when the rows were capped. */
  totalHosts: number;
}

/** The smallest ULID of a millisecond: ids compare as text, and job ids are ULIDs of creation. */
function firstIdAt(at: Date): string {
  return `${encodeTime(Math.max(0, at.getTime()), 10)}${"0".repeat(16)}`;
}

function inWindow(from: Date, to: Date) {
  return and(
    isNotNull(jobs.startedAt),
    lt(jobs.startedAt, to),
    or(
      inArray(jobs.status, [...ACTIVE_JOB_STATUSES]),
      // The id bound lets the primary key find recent jobs; a job that ran longer than a day
      // before ending inside the window is left out rather than scanning the whole history.
      and(gte(jobs.id, firstIdAt(new Date(from.getTime() - LONGEST_JOB_MS))), gte(jobs.finishedAt, from)),
    ),
  );
}

type Ranked = { id: string; name: string; rank: number };

export async function loadJobTimeline(
  db: Database,
  now: Date,
  problems: HostProblems,
  maxHosts: number = TIMELINE_MAX_HOSTS,
): Promise<JobTimeline> {
  const from = new Date(now.getTime() - TIMELINE_HOURS * HOUR_MS);
  const window = inWindow(from, now);
  const [fleet, activity] = await Promise.all([
    db.select({ id: hosts.id, name: hosts.name, status: hosts.status }).from(hosts),
    db
      .select({
        hostId: jobs.hostId,
        jobs: count(),
        failed: sql<boolean>`bool_or(${jobs.status} in ('failed', 'lost'))`,
      })
      .from(jobs)
      .where(window)
      .groupBy(jobs.hostId),
  ]);
  const byHost = new Map(activity.map((row) => [row.hostId, row]));
  const failedJobs = (hostId: string) => byHost.get(hostId)?.failed === true;
  const rankOf = (hostId: string): number => {
    if (problems.failing.has(hostId) || problems.overdue.has(hostId) || failedJobs(hostId)) {
      return 0;
    }
    return byHost.has(hostId) ? 1 : 2;
  };
  const ranked: Ranked[] = fleet.map((host) => ({ id: host.id, name: host.name, rank: rankOf(host.id) }));
  ranked.sort((a, b) => a.rank - b.rank || a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  const chosen = ranked.slice(0, maxHosts);
  const chosenIds = chosen.map((host) => host.id);
  const jobsByHost = new Map<string, TimelineJob[]>();
  if (chosenIds.length > 0) {
    const numbered = db
      .select({
        id: jobs.id,
        hostId: jobs.hostId,
        kind: jobs.kind,
        status: jobs.status,
        groupName: sourceGroups.name,
        startedAt: jobs.startedAt,
        finishedAt: jobs.finishedAt,
        n: sql<number>`row_number() over (partition by ${jobs.hostId} order by ${jobs.startedAt} desc)`.as(
          "n",
        ),
      })
      .from(jobs)
      .leftJoin(sourceGroups, eq(sourceGroups.id, jobs.sourceGroupId))
      .where(and(window, inArray(jobs.hostId, chosenIds)))
      .as("numbered");
    const rows = await db
      .select()
      .from(numbered)
      .where(lte(numbered.n, TIMELINE_MAX_JOBS_PER_HOST))
      .orderBy(asc(numbered.startedAt), asc(numbered.id));
    for (const row of rows) {
      if (row.startedAt === null) {
        continue;
      }
      const list = jobsByHost.get(row.hostId) ?? [];
      list.push({
        id: row.id,
        kind: row.kind,
        status: row.status,
        groupName: row.groupName,
        startedAt: row.startedAt,
        finishedAt: row.finishedAt,
      });
      jobsByHost.set(row.hostId, list);
    }
  }
  const statusOf = new Map(fleet.map((host) => [host.id, host.status]));
  return {
    from,
    to: now,
    totalHosts: fleet.length,
    hosts: chosen.map((host) => ({
      id: host.id,
      name: host.name,
      status: statusOf.get(host.id) ?? "offline",
      overdue: problems.overdue.has(host.id),
      failing: problems.failing.has(host.id),
      failedJobs: failedJobs(host.id),
      jobs: jobsByHost.get(host.id) ?? [],
    })),
  };
}

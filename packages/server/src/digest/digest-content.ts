/**
 * @module digest/digest-content
 * The fleet digest (issue 39.1): one short word a day (or week) on the whole fleet, so that its
 * absence is itself the alarm. Counts for every state and the worst few by name, never a list of
 * every host: it stays the same size at 5,000 hosts, and the rest is one link away on the host
 * list. What changed is measured against the state the previous digest recorded (the ids it saw
 * failing, overdue, offline, held and enrolled), so a digest says what resolved too.
 */
import { type Database, deletionHolds, executeRows, jobs } from "@fleetback/db";
import { and, eq, gt, inArray, isNull, lte, sql } from "drizzle-orm";
import { utcDay } from "../clock.js";
import type { ServerDeps } from "../deps.js";
import { countHostStates, type HostStateCounts, loadHostProblems } from "../freshness/host-states.js";
import { isUnprotected } from "../freshness/protection.js";
import { listFleet } from "../hosts/fleet-view.js";
import { type ProtectionCounts, protectionCounts } from "../keepers/protection-view.js";

/** Names shown per list; the count says how many there are in all. */
export const DIGEST_WORST = 5;

/** What a digest saw, kept for the next one to compare with. */
export interface DigestState {
  at: string;
  hosts: string[];
  failing: string[];
  overdue: string[];
  offline: string[];
  held: string[];
  /** Hosts that needed a person: failing, overdue, offline or with a failed drill. */
  attention: string[];
}

export interface NamedList {
  count: number;
  /** At most DIGEST_WORST names, in name order. */
  names: string[];
}

export interface GrowthEntry {
  name: string;
  bytes: number;
}

/** Repositories growing most and least, at most this many each. */
export const DIGEST_GROWTH = 3;

export interface Digest {
  generated_at: string;
  /** When the previous digest was made; null for the first. */
  since: string | null;
  hosts: HostStateCounts;
  deletion: ProtectionCounts;
  overdue: NamedList;
  offline: NamedList;
  failing: NamedList;
  unprotected: NamedList;
  changes: {
    new_failures: NamedList;
    /** Needed a person at the previous digest, and no longer do. */
    resolved: NamedList;
    newly_overdue: NamedList;
    new_hosts: NamedList;
    newly_held: NamedList;
  };
  drills: { passed: number; failed: NamedList };
  /** Repositories by how much they grew over the period (stored bytes), most and least. */
  growth: { fastest: GrowthEntry[]; slowest: GrowthEntry[] };
  /** Whether anything needs a person: the digest's one-word verdict. */
  all_well: boolean;
  state: DigestState;
}

function named(ids: Iterable<string>, names: ReadonlyMap<string, string>): NamedList {
  const list = [...new Set(ids)].map((id) => names.get(id) ?? id).sort();
  return { count: list.length, names: list.slice(0, DIGEST_WORST) };
}

function minus(now: readonly string[], before: readonly string[] | undefined): string[] {
  const seen = new Set(before ?? []);
  return now.filter((id) => !seen.has(id));
}

async function heldHostIds(db: Database): Promise<string[]> {
  const rows = await db
    .selectDistinct({ hostId: deletionHolds.hostId })
    .from(deletionHolds)
    .where(isNull(deletionHolds.releasedAt));
  return rows.map((row) => row.hostId);
}

/** Drills that ended in (since, now]; the failed ones by host. */
async function drillsSince(db: Database, since: Date, now: Date) {
  return db
    .select({ hostId: jobs.hostId, status: jobs.status })
    .from(jobs)
    .where(
      and(
        eq(jobs.kind, "drill"),
        inArray(jobs.status, ["succeeded", "failed"]),
        gt(jobs.finishedAt, since),
        lte(jobs.finishedAt, now),
      ),
    );
}

/** Each repository's growth from its first size on or after `since`'s day to its last. */
async function growthSince(db: Database, since: Date): Promise<Array<{ host_id: string; bytes: string }>> {
  return executeRows(
    db,
    sql`select host_id,
               ((array_agg(raw_size_bytes order by day desc))[1]
                - (array_agg(raw_size_bytes order by day asc))[1])::text as bytes
          from repository_sizes
         where day >= ${utcDay(since)}::date and raw_size_bytes is not null
         group by host_id
        having count(*) >= 2`,
  );
}

/**
 * The digest at the clock's now, against `previous` (the state the last digest kept; none for a
 * channel's first, which then covers the last `periodMs`).
 */
export async function buildDigest(
  deps: Pick<ServerDeps, "db" | "config" | "clock">,
  previous: DigestState | undefined,
  periodMs: number,
): Promise<Digest> {
  const now = deps.clock.now();
  const since = previous ? new Date(previous.at) : new Date(now.getTime() - periodMs);
  const { problems } = await loadHostProblems(deps, now);
  const [fleet, deletion, held, drills, grown] = await Promise.all([
    listFleet(deps.db),
    protectionCounts(deps.db),
    heldHostIds(deps.db),
    drillsSince(deps.db, since, now),
    growthSince(deps.db, since),
  ]);
  const names = new Map(fleet.map((host) => [host.id, host.name]));
  const ids = fleet.map((host) => host.id);
  const failing = ids.filter((id) => problems.failing.has(id));
  const overdue = ids.filter((id) => problems.overdue.has(id));
  const offline = fleet.filter((host) => host.status === "offline").map((host) => host.id);
  const unprotected = ids.filter((id) => {
    const verdict = problems.protection.get(id);
    return verdict !== undefined && isUnprotected(verdict);
  });
  const failedDrills = drills.filter((drill) => drill.status === "failed").map((drill) => drill.hostId);
  const attention = [...new Set([...failing, ...overdue, ...offline, ...failedDrills])];
  const state: DigestState = {
    at: now.toISOString(),
    hosts: ids,
    failing,
    overdue,
    offline,
    held,
    attention,
  };
  const needing = new Set(attention);
  const changes = {
    new_failures: named(minus(failing, previous?.failing), names),
    resolved: named(
      (previous?.attention ?? []).filter((id) => names.has(id) && !needing.has(id)),
      names,
    ),
    newly_overdue: named(minus(overdue, previous?.overdue), names),
    new_hosts: named(previous ? minus(ids, previous.hosts) : [], names),
    newly_held: named(minus(held, previous?.held), names),
  };
  const growth = grown
    .filter((row) => names.has(row.host_id))
    .map((row) => ({ name: names.get(row.host_id) as string, bytes: Number(row.bytes) }))
    .sort((a, b) => b.bytes - a.bytes || (a.name < b.name ? -1 : 1));
  return {
    generated_at: now.toISOString(),
    since: previous?.at ?? null,
    hosts: countHostStates(fleet, problems),
    deletion,
    overdue: named(overdue, names),
    offline: named(offline, names),
    failing: named(failing, names),
    unprotected: named(unprotected, names),
    changes,
    drills: { passed: drills.length - failedDrills.length, failed: named(failedDrills, names) },
    growth: {
      fastest: growth.slice(0, DIGEST_GROWTH),
      slowest: growth.length > DIGEST_GROWTH ? growth.slice(-DIGEST_GROWTH).reverse() : [],
    },
    all_well: attention.length === 0,
    state,
  };
}

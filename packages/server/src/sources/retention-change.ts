/**
 * @module sources/retention-change
 * Whether a change of a source group's retention policy destroys history. Forget keeps what any
 * key of the policy keeps (restic keeps the union), and a group without a policy is skipped, so
 * it keeps everything. A change is a *lowering* when, for snapshots that exist, the new policy can
 * keep fewer than the old one: a count or a duration becomes smaller, a key is removed from a
 * policy that stays non-empty, or an empty policy (keep all) gets one. Lowering is an admin's
 * decision (sources/source-group-requests.ts); raising, adding keys and clearing the policy are not.
 */
import { type Database, type RetentionPolicy, type SourceGroup, snapshots } from "@fleetback/db";
import { KEEP_COUNT_KEYS, KEEP_WITHIN_KEYS } from "@fleetback/protocol";
import { and, eq } from "drizzle-orm";

type Policy = Partial<Record<string, number | string>>;

const HOURS: Record<string, number> = { y: 365 * 24, m: 31 * 24, d: 24, h: 1 };

/** Approximate hours of a restic duration (`1y6m`, `30d`); comparisons only. */
export function durationHours(duration: string): number {
  let hours = 0;
  for (const [, amount, unit] of duration.matchAll(/([0-9]+)([ymdh])/g)) {
    hours += Number(amount) * (HOURS[unit ?? "h"] ?? 1);
  }
  return hours;
}

function isEmpty(policy: Policy | undefined): boolean {
  return policy === undefined || Object.keys(policy).length === 0;
}

/**
 * The keys by which `after` keeps fewer snapshots than `before` (empty: not lowered).
 * `snapshotsExist`: whether snapshots of the group's tag exist; with none, a first policy
 * destroys nothing.
 */
export function loweredKeys(
  before: RetentionPolicy | Policy | undefined,
  after: RetentionPolicy | Policy | undefined,
  snapshotsExist: boolean,
): string[] {
  const old = before as Policy | undefined;
  const next = after as Policy | undefined;
  if (isEmpty(next)) {
    return [];
  }
  if (isEmpty(old)) {
    return snapshotsExist ? Object.keys(next ?? {}) : [];
  }
  const lowered: string[] = [];
  for (const key of [...KEEP_COUNT_KEYS, ...KEEP_WITHIN_KEYS] as string[]) {
    const was = old?.[key];
    const now = next?.[key];
    if (was === undefined) {
      continue;
    }
    if (now === undefined) {
      lowered.push(key);
    } else if (typeof was === "number" && typeof now === "number" && now < was) {
      lowered.push(key);
    } else if (
      typeof was === "string" &&
      typeof now === "string" &&
      durationHours(now) < durationHours(was)
    ) {
      lowered.push(key);
    }
  }
  return lowered;
}

/** Whether the host's cached snapshot list has one tagged `tag` (the group name is its tag). */
async function tagHasSnapshots(db: Database, hostId: string, tag: string): Promise<boolean> {
  const rows = await db
    .select({ tags: snapshots.tags })
    .from(snapshots)
    .where(and(eq(snapshots.hostId, hostId), eq(snapshots.isOwn, true)));
  return rows.some((row) => row.tags.includes(tag));
}

export interface RetentionChange {
  /** The policy the group's tag had (`{}` for a new group or a rename onto a new tag). */
  from: RetentionPolicy;
  to: RetentionPolicy;
  lowered: string[];
}

/** The audit details of a change: from, to and what it lowered, or nothing when there was none. */
export function retentionDetails(change: RetentionChange | undefined) {
  return change === undefined
    ? {}
    : { retention_policy: { from: change.from, to: change.to, lowered: change.lowered } };
}

/**
 * What a create (`current` undefined) or an update does to the retention of the group's tag;
 * undefined when the policy and the tag stay as they are.
 */
export async function retentionChange(
  db: Database,
  hostId: string,
  current: Pick<SourceGroup, "name" | "retentionPolicy"> | undefined,
  body: { name?: string; retention_policy?: Record<string, unknown> },
): Promise<RetentionChange | undefined> {
  const name = body.name ?? current?.name ?? "";
  const to = (body.retention_policy ?? current?.retentionPolicy ?? {}) as RetentionPolicy;
  // A rename moves the policy onto another tag, whose snapshots had none from this group.
  const from = current !== undefined && current.name === name ? current.retentionPolicy : {};
  if (current !== undefined && current.name === name && JSON.stringify(from) === JSON.stringify(to)) {
    return undefined;
  }
  if (current === undefined && isEmpty(to as Policy)) {
    return undefined;
  }
  const exist =
    isEmpty(from as Policy) && !isEmpty(to as Policy) ? await tagHasSnapshots(db, hostId, name) : true;
  return { from, to, lowered: loweredKeys(from, to, exist) };
}

/**
 * @module retention/host-retention
 * A protected host's forget, planned by the server (issue 33): its own cached snapshots, each
 * time written in the host's zone (zoned-time.ts) and with the server's first sighting, go through
 * planRetention with the keeper's restic rules; the keeper then runs `restic forget <id>...` with
 * exactly the ids the plan removes. What the plan decided travels in the job's params, so the job
 * page and the API show which ids go by which group, which stay and why, and which were suspect.
 */
import { type Database, hosts, snapshots } from "@fleetback/db";
import { FORGET_SNAPSHOTS_MAX, type ForgetGroup } from "@fleetback/protocol";
import { and, eq } from "drizzle-orm";
import type { ForgetRules } from "./expire-policy.js";
import { planRetention } from "./plan-retention.js";
import { zonedRfc3339 } from "./zoned-time.js";

/** Kept entries listed per group in a job's params; the rest is counted (a job row stays small). */
export const PLAN_KEEP_LISTED = 200;

export interface PlannedGroup {
  tag: string;
  keep: { id: string; reasons: string[] }[];
  /** Kept snapshots past PLAN_KEEP_LISTED. */
  keep_more: number;
  remove: string[];
  suspect: { id: string; claimed: string; first_seen: string }[];
}

/** The plan as a job's params carry it (snake_case, as the API shows params). */
export interface RetentionPlanParams {
  groups: PlannedGroup[];
  /** Ids the plan removes in all; this job forgets the first FORGET_SNAPSHOTS_MAX of them. */
  remove_total: number;
}

export type HostRetention =
  | { ok: true; snapshotIds: string[]; plan: RetentionPlanParams; suspects: number }
  | { ok: false; error: string };

/** restic from 0.16 on keeps a group's oldest snapshot while a rule has counts left. */
export function forgetRulesOf(toolVersion: string | null | undefined): ForgetRules {
  const [major, minor] = (toolVersion ?? "").split(".").map((part) => Number.parseInt(part, 10));
  if (major === 0 && minor !== undefined && Number.isFinite(minor) && minor < 16) {
    return "restic-0.14";
  }
  return "restic-0.18";
}

export async function planHostRetention(
  db: Database,
  input: {
    hostId: string;
    groups: readonly ForgetGroup[];
    now: Date;
    defaultTimeZone: string;
    keeperToolVersion: string | null;
  },
): Promise<HostRetention> {
  const [host] = await db.select({ timeZone: hosts.timeZone }).from(hosts).where(eq(hosts.id, input.hostId));
  const zone = host?.timeZone ?? input.defaultTimeZone;
  const rows = await db
    .select({
      id: snapshots.id,
      time: snapshots.time,
      hostname: snapshots.hostname,
      tags: snapshots.tags,
      firstSeenAt: snapshots.firstSeenAt,
    })
    .from(snapshots)
    .where(and(eq(snapshots.hostId, input.hostId), eq(snapshots.isOwn, true)));
  const planned = planRetention({
    snapshots: rows.map((row) => ({
      id: row.id,
      time: zonedRfc3339(row.time, zone),
      hostname: row.hostname,
      tags: row.tags,
      firstSeenAt: row.firstSeenAt,
    })),
    groups: input.groups,
    now: input.now,
    rules: forgetRulesOf(input.keeperToolVersion),
  });
  if (!planned.ok) {
    return planned;
  }
  const groups = planned.groups.map((group) => ({
    tag: group.tag,
    keep: group.keep.slice(0, PLAN_KEEP_LISTED).map((kept) => ({ id: kept.id, reasons: [...kept.reasons] })),
    keep_more: Math.max(0, group.keep.length - PLAN_KEEP_LISTED),
    remove: group.remove.map((removed) => removed.id),
    suspect: group.suspect.map((suspect) => ({
      id: suspect.id,
      claimed: suspect.claimed,
      first_seen: suspect.firstSeen.toISOString(),
    })),
  }));
  return {
    ok: true,
    snapshotIds: planned.removeIds.slice(0, FORGET_SNAPSHOTS_MAX),
    plan: { groups, remove_total: planned.removeIds.length },
    suspects: groups.reduce((sum, group) => sum + group.suspect.length, 0),
  };
}

/**
 * @module retention/plan-retention
 * Which of a host's snapshots its source groups' policies remove, decided by the server from its
 * own copy of the snapshot list, so that a keeper deletes exactly those ids (`restic forget <id>...`)
 * and a host cannot steer retention by what its restic computes.
 *
 * Per group the plan is what `restic forget --tag <tag> --group-by host,tags --keep-*` would
 * decide: the snapshots carrying the group's tag, split by hostname and whole tag set (a snapshot
 * tagged `[tag, manual]` is counted apart from those tagged `[tag]`), the policy applied to each
 * part on its own (expire-policy.ts). Suspect snapshots (suspect-snapshots.ts) are taken out
 * before, listed and kept. Nothing here reads a database or a clock: `now` is an argument.
 */
import type { ForgetGroup } from "@fleetback/protocol";
import {
  applyExpirePolicy,
  type ForgetRules,
  type KeptSnapshot,
  type PolicySnapshot,
} from "./expire-policy.js";
import { type KeepPolicy, readKeepPolicy } from "./keep-policy.js";
import { instantOf, parseResticTime, type ResticTime } from "./restic-time.js";
import { DEFAULT_SUSPECT_TOLERANCE, isSuspect, type SuspectTolerance } from "./suspect-snapshots.js";

export interface RetentionSnapshot {
  id: string;
  /**
   * RFC 3339 as restic stored it, with the offset of the machine that made it: restic buckets by
   * that wall clock, so a time normalised to UTC moves snapshots near midnight to another day.
   */
  time: string;
  hostname: string;
  tags: readonly string[];
  /** When the server first saw the snapshot; null for those seen before it recorded this. */
  firstSeenAt: Date | null;
}

export interface RetentionInput {
  /** The host's own snapshots (another machine's in a shared repository are not the host's to plan). */
  snapshots: readonly RetentionSnapshot[];
  groups: readonly ForgetGroup[];
  now: Date;
  tolerance?: SuspectTolerance;
  /** Default `restic-0.18`, which also keeps a group's oldest snapshot while a rule has counts left. */
  rules?: ForgetRules;
}

export interface SuspectSnapshot {
  id: string;
  /** The time the snapshot claims, as given. */
  claimed: string;
  firstSeen: Date;
}

export interface GroupPlan {
  tag: string;
  /** Each of restic's groups (hostname, tag set) in turn, newest first within it. */
  keep: KeptSnapshot[];
  remove: { id: string }[];
  suspect: SuspectSnapshot[];
}

export type RetentionPlan =
  | {
      ok: true;
      groups: GroupPlan[];
      /**
       * The ids to forget: removed by a group's policy and neither kept by another group's nor
       * suspect in one. A snapshot carries one group's tag unless someone tagged it by hand, and
       * then the policy that keeps it wins over the one that would remove it.
       */
      removeIds: string[];
    }
  | { ok: false; error: string };

interface TimedSnapshot extends RetentionSnapshot {
  parsed: ResticTime;
}

const NOTHING_PLANNED = "nothing is planned for removal";

function partKey(snapshot: RetentionSnapshot): string {
  return JSON.stringify([snapshot.hostname, [...snapshot.tags].sort()]);
}

function planGroup(
  tag: string,
  policy: KeepPolicy,
  snapshots: readonly TimedSnapshot[],
  input: RetentionInput,
): GroupPlan {
  const tolerance = input.tolerance ?? DEFAULT_SUSPECT_TOLERANCE;
  const plan: GroupPlan = { tag, keep: [], remove: [], suspect: [] };
  const parts = new Map<string, PolicySnapshot[]>();
  for (const snapshot of snapshots) {
    if (!snapshot.tags.includes(tag)) {
      continue;
    }
    if (snapshot.firstSeenAt !== null && isSuspect(snapshot.parsed, snapshot.firstSeenAt, tolerance)) {
      plan.suspect.push({ id: snapshot.id, claimed: snapshot.time, firstSeen: snapshot.firstSeenAt });
      continue;
    }
    const key = partKey(snapshot);
    const part = parts.get(key) ?? [];
    part.push({ id: snapshot.id, time: snapshot.parsed });
    parts.set(key, part);
  }
  const now = instantOf(input.now);
  for (const key of [...parts.keys()].sort()) {
    const outcome = applyExpirePolicy(parts.get(key) ?? [], policy, now, input.rules ?? "restic-0.18");
    plan.keep.push(...outcome.keep);
    plan.remove.push(...outcome.remove.map((id) => ({ id })));
  }
  return plan;
}

export function planRetention(input: RetentionInput): RetentionPlan {
  const policies = new Map<string, KeepPolicy>();
  for (const group of input.groups) {
    if (group.tag.trim() === "") {
      return { ok: false, error: `a group has an empty tag; ${NOTHING_PLANNED}` };
    }
    if (policies.has(group.tag)) {
      return { ok: false, error: `tag ${JSON.stringify(group.tag)} names two groups; ${NOTHING_PLANNED}` };
    }
    const policy = readKeepPolicy(group.keep);
    if ("refused" in policy) {
      return { ok: false, error: `tag ${JSON.stringify(group.tag)}: ${policy.refused}; ${NOTHING_PLANNED}` };
    }
    policies.set(group.tag, policy);
  }
  const timed: TimedSnapshot[] = [];
  const ids = new Set<string>();
  for (const snapshot of input.snapshots) {
    const parsed = parseResticTime(snapshot.time);
    if (parsed === undefined) {
      return {
        ok: false,
        error: `snapshot ${snapshot.id} has the time ${snapshot.time}; ${NOTHING_PLANNED}`,
      };
    }
    if (ids.has(snapshot.id)) {
      return { ok: false, error: `snapshot ${snapshot.id} is listed twice; ${NOTHING_PLANNED}` };
    }
    ids.add(snapshot.id);
    timed.push({ ...snapshot, parsed });
  }

  const groups = [...policies].map(([tag, policy]) => planGroup(tag, policy, timed, input));
  const held = new Set(groups.flatMap((group) => [...group.keep, ...group.suspect].map(({ id }) => id)));
  const removeIds = [...new Set(groups.flatMap((group) => group.remove.map(({ id }) => id)))].filter(
    (id) => !held.has(id),
  );
  return { ok: true, groups, removeIds };
}

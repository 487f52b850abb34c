/**
 * @module retention/expire-policy
 * restic's `ApplyPolicy` (internal/restic/snapshot_policy.go, unchanged in what it decides from
 * 0.16 to 0.19) for one of its snapshot groups, reproduced step for step because the ids it removes
 * are the ids a keeper deletes:
 *
 * - The group is walked newest first. restic's order among snapshots of the very same instant is
 *   that of its parallel loading, so any order is one restic could have taken; ours is by id, so
 *   that a plan is reproducible.
 * - A count rule keeps a snapshot whose bucket (its position for `last`; its wall-clock hour, day,
 *   ISO week, month or year otherwise) differs from the bucket of the last snapshot that rule
 *   kept, while it has counts left. Since 0.16 the group's oldest snapshot is also kept by every
 *   rule with counts left, and 0.18 says so ("oldest daily snapshot") when its bucket was taken.
 * - Windows (`within*`) reach back from the newest snapshot that is not in the future (`now`),
 *   not from `now`; if every snapshot is in the future, all of them are inside. A windowed rule
 *   keeps the first snapshot of each bucket inside its window, without a count.
 * - Reasons read as restic's `matches`: `within 7d`, then the count rules from `last` to `yearly`,
 *   then the windowed rules from hourly to yearly (`daily within 7d`).
 */
import { KEEP_COUNT_KEYS, type KeepCountKey, type KeepWithinKey } from "@fleetback/protocol";
import type { KeepPolicy } from "./keep-policy.js";
import { formatResticDuration, windowStart } from "./restic-duration.js";
import {
  compareInstants,
  dayBucket,
  hourBucket,
  type Instant,
  monthBucket,
  type ResticTime,
  weekBucket,
  yearBucket,
} from "./restic-time.js";

/**
 * Whose forget to reproduce. They differ only at a group's oldest snapshot, which restic before
 * 0.16 removes when its bucket was already taken; 0.16 and 0.17 keep it as 0.18 does, without the
 * word "oldest" in the reason.
 */
export type ForgetRules = "restic-0.14" | "restic-0.18";

export interface PolicySnapshot {
  id: string;
  time: ResticTime;
}

export interface KeptSnapshot {
  id: string;
  reasons: string[];
}

export interface PolicyOutcome {
  /** Newest first, as restic lists them. */
  keep: KeptSnapshot[];
  remove: string[];
}

type Bucket = (time: ResticTime, position: number) => number;

const COUNT_RULES: Record<KeepCountKey, { bucket: Bucket; reason: string }> = {
  last: { bucket: (_time, position) => position, reason: "last snapshot" },
  hourly: { bucket: hourBucket, reason: "hourly snapshot" },
  daily: { bucket: dayBucket, reason: "daily snapshot" },
  weekly: { bucket: weekBucket, reason: "weekly snapshot" },
  monthly: { bucket: monthBucket, reason: "monthly snapshot" },
  yearly: { bucket: yearBucket, reason: "yearly snapshot" },
};

const WINDOW_RULES: readonly { key: Exclude<KeepWithinKey, "within">; bucket: Bucket; reason: string }[] = [
  { key: "within_hourly", bucket: hourBucket, reason: "hourly within" },
  { key: "within_daily", bucket: dayBucket, reason: "daily within" },
  { key: "within_weekly", bucket: weekBucket, reason: "weekly within" },
  { key: "within_monthly", bucket: monthBucket, reason: "monthly within" },
  { key: "within_yearly", bucket: yearBucket, reason: "yearly within" },
];

function newestFirst(a: PolicySnapshot, b: PolicySnapshot): number {
  return compareInstants(b.time, a.time) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The newest time strictly before `now`, in a list sorted newest first. */
function latestBefore(sorted: readonly PolicySnapshot[], now: Instant): ResticTime | undefined {
  return sorted.find((snapshot) => compareInstants(snapshot.time, now) < 0)?.time;
}

function isInside(time: ResticTime, start: Instant | undefined): boolean {
  return start === undefined || compareInstants(time, start) > 0;
}

export function applyExpirePolicy(
  group: readonly PolicySnapshot[],
  policy: KeepPolicy,
  now: Instant,
  rules: ForgetRules,
): PolicyOutcome {
  const sorted = [...group].sort(newestFirst);
  const latest = latestBefore(sorted, now);
  const start = (key: KeepWithinKey) => {
    const duration = policy.windows[key];
    return latest === undefined || duration === undefined ? undefined : windowStart(latest, duration);
  };
  const counts = KEEP_COUNT_KEYS.flatMap((key) => {
    const left = policy.counts[key] ?? 0;
    return left > 0 ? [{ ...COUNT_RULES[key], left, last: -1 }] : [];
  });
  const windows = WINDOW_RULES.flatMap(({ key, bucket, reason }) => {
    const duration = policy.windows[key];
    return duration === undefined
      ? []
      : [{ bucket, reason: `${reason} ${formatResticDuration(duration)}`, start: start(key), last: -1 }];
  });
  const within = policy.windows.within;
  const withinStart = start("within");
  const keepsOldest = rules === "restic-0.18";

  const outcome: PolicyOutcome = { keep: [], remove: [] };
  sorted.forEach((snapshot, position) => {
    const reasons: string[] = [];
    const isOldest = keepsOldest && position === sorted.length - 1;
    const take = (rule: { bucket: Bucket; reason: string; last: number }): boolean => {
      const value = rule.bucket(snapshot.time, position);
      if (value !== rule.last) {
        reasons.push(rule.reason);
      } else if (isOldest) {
        reasons.push(`oldest ${rule.reason}`);
      } else {
        return false;
      }
      rule.last = value;
      return true;
    };
    if (within !== undefined && isInside(snapshot.time, withinStart)) {
      reasons.push(`within ${formatResticDuration(within)}`);
    }
    for (const rule of counts) {
      if (rule.left > 0 && take(rule)) {
        rule.left -= 1;
      }
    }
    for (const rule of windows) {
      if (isInside(snapshot.time, rule.start)) {
        take(rule);
      }
    }
    if (reasons.length > 0) {
      outcome.keep.push({ id: snapshot.id, reasons });
    } else {
      outcome.remove.push(snapshot.id);
    }
  });
  return outcome;
}

/**
 * @module retention/keep-policy
 * A group's `keep` checked and read into the rules the planner applies, or refused. Planning a
 * removal is as final as running it, so every doubt refuses, as the agent's forget-policy does: a
 * key the planner does not know (ignoring it would widen the removal), a count below 1, a duration
 * that is not restic's, and a policy with nothing left to keep by (restic would keep nothing).
 * Zero durations (`0d`) are dropped first, because restic ignores them.
 */
import {
  KEEP_COUNT_KEYS,
  KEEP_KEYS,
  KEEP_WITHIN_KEYS,
  type Keep,
  type KeepCountKey,
  type KeepWithinKey,
} from "@fleetback/protocol";
import { isZeroDuration, parseResticDuration, type ResticDuration } from "./restic-duration.js";

export interface KeepPolicy {
  counts: Partial<Record<KeepCountKey, number>>;
  windows: Partial<Record<KeepWithinKey, ResticDuration>>;
}

export function readKeepPolicy(keep: Keep): KeepPolicy | { refused: string } {
  const known: readonly string[] = KEEP_KEYS;
  const unknown = Object.entries(keep)
    .filter(([key, value]) => value !== undefined && !known.includes(key))
    .map(([key]) => key);
  if (unknown.length > 0) {
    return { refused: `unknown keep dimension ${unknown.join(", ")}` };
  }
  const policy: KeepPolicy = { counts: {}, windows: {} };
  let rules = 0;
  for (const key of KEEP_COUNT_KEYS) {
    const value = keep[key];
    if (value === undefined) {
      continue;
    }
    if (!Number.isSafeInteger(value) || value < 1) {
      return { refused: `keep ${key} must be an integer of at least 1` };
    }
    policy.counts[key] = value;
    rules += 1;
  }
  for (const key of KEEP_WITHIN_KEYS) {
    const value = keep[key];
    if (value === undefined) {
      continue;
    }
    const duration = parseResticDuration(value);
    if (duration === undefined) {
      return { refused: `keep ${key} must be a restic duration such as 30d or 1y6m` };
    }
    if (!isZeroDuration(duration)) {
      policy.windows[key] = duration;
      rules += 1;
    }
  }
  if (rules === 0) {
    return { refused: "empty retention policy (it would remove every snapshot of the group)" };
  }
  return policy;
}

/**
 * @module jobs/forget-policy
 * Turns `forget_groups` into restic argv, or refuses the whole job before anything runs. Forget
 * deletes, so every doubt refuses: an empty `keep` (restic would then keep nothing of the group;
 * the wire lets it through so that the job can be refused), a value restic would read differently
 * from what the operator set, a dimension this agent does not know (dropping it would widen the
 * deletion), or a tag with a comma (restic reads `--tag a,b` as two tags). One bad group refuses
 * every group, so a job never half-runs a policy set that was wrong.
 *
 * Grouping is `--group-by host,tags`, not restic's default `host,paths`: snapshots are tagged per
 * source group, so the keep values apply to the group's snapshots as a whole even after its
 * include paths changed (with `host,paths` the snapshots of old path sets would each form a group
 * of their own and be kept forever), while keeping `host` means a repository shared by two hosts
 * never has one host's snapshots counted against the other's. `--tag` only filters; it does not group.
 * `--prune` is never passed: pruning is its own job with admin credentials.
 *
 * With `hosts` (protocol 11) each run also passes `--host=<name>` for every name: restic then
 * looks only at this host's snapshots, so in a repository shared with other machines (or made by
 * hand before Fleetback) their snapshots are never counted against this host's policy or removed
 * by it. `--host` repeated is "any of these" on restic 0.14 and 0.18.
 */
import {
  type ForgetGroup,
  isResticDuration,
  KEEP_COUNT_KEYS,
  KEEP_KEYS,
  KEEP_WITHIN_KEYS,
  type Keep,
  type KeepCountKey,
  type KeepWithinKey,
} from "@fleetback/protocol";

export const FORGET_GROUP_BY = "host,tags";

const COUNT_FLAGS: Record<KeepCountKey, string> = {
  last: "--keep-last",
  hourly: "--keep-hourly",
  daily: "--keep-daily",
  weekly: "--keep-weekly",
  monthly: "--keep-monthly",
  yearly: "--keep-yearly",
};

const WITHIN_FLAGS: Record<KeepWithinKey, string> = {
  within: "--keep-within",
  within_hourly: "--keep-within-hourly",
  within_daily: "--keep-within-daily",
  within_weekly: "--keep-within-weekly",
  within_monthly: "--keep-within-monthly",
  within_yearly: "--keep-within-yearly",
};

export interface ForgetRun {
  tag: string;
  /** Arguments after the `forget` subcommand. */
  args: string[];
}

export type ForgetPlan = { ok: true; runs: ForgetRun[] } | { ok: false; error: string };

const NOTHING_DELETED = "nothing was deleted";

/** restic's flags for one policy, in KEEP_KEYS order, or why the policy is refused. */
export function keepFlags(keep: Keep): string[] | { refused: string } {
  const known: readonly string[] = KEEP_KEYS;
  const unknown = Object.entries(keep)
    .filter(([key, value]) => value !== undefined && !known.includes(key))
    .map(([key]) => key);
  if (unknown.length > 0) {
    return { refused: `unknown keep dimension ${unknown.join(", ")}` };
  }
  const flags: string[] = [];
  for (const key of KEEP_COUNT_KEYS) {
    const value = keep[key];
    if (value === undefined) {
      continue;
    }
    if (!Number.isSafeInteger(value) || value < 1) {
      return { refused: `keep ${key} must be an integer of at least 1` };
    }
    flags.push(COUNT_FLAGS[key], String(value));
  }
  for (const key of KEEP_WITHIN_KEYS) {
    const value = keep[key];
    if (value === undefined) {
      continue;
    }
    if (!isResticDuration(value)) {
      return { refused: `keep ${key} must be a restic duration such as 30d or 1y6m` };
    }
    flags.push(WITHIN_FLAGS[key], value);
  }
  if (flags.length === 0) {
    return { refused: "empty retention policy (it would delete every snapshot of the group)" };
  }
  return flags;
}

export function forgetArgs(tag: string, flags: readonly string[], hosts: readonly string[] = []): string[] {
  return [...hosts.map((host) => `--host=${host}`), "--tag", tag, "--group-by", FORGET_GROUP_BY, ...flags];
}

/** Every group checked before any runs; the first refusal refuses the job. */
export function planForget(
  groups: readonly ForgetGroup[] | undefined,
  hosts: readonly string[] = [],
): ForgetPlan {
  if (groups === undefined || groups.length === 0) {
    return { ok: false, error: `the forget command names no groups (forget_groups); ${NOTHING_DELETED}` };
  }
  if (hosts.some((host) => host === "")) {
    return { ok: false, error: `an empty hostname in hosts; ${NOTHING_DELETED}` };
  }
  const runs: ForgetRun[] = [];
  for (const group of groups) {
    if (group.tag.trim() === "" || group.tag.includes(",")) {
      return { ok: false, error: `invalid tag ${JSON.stringify(group.tag)}; ${NOTHING_DELETED}` };
    }
    const flags = keepFlags(group.keep);
    if (!Array.isArray(flags)) {
      return { ok: false, error: `tag ${JSON.stringify(group.tag)}: ${flags.refused}; ${NOTHING_DELETED}` };
    }
    runs.push({ tag: group.tag, args: forgetArgs(group.tag, flags, hosts) });
  }
  return { ok: true, runs };
}

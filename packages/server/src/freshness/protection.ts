/**
 * @module freshness/protection
 * Is a host's data protected at all? One verdict per host, from its repository and the freshness
 * of its source groups (freshness/freshness.ts), shared by the host list, the host page, the
 * dashboard and their APIs so they never disagree.
 *
 * From worst to best:
 *   no_repository  no repository credential: nothing can be backed up;
 *   no_group       no source group: nothing is chosen to be backed up;
 *   overdue        a scheduled group is past its deadline (a failure, alerted);
 *   unscheduled    a group no enabled schedule fires: its paths are only backed up by hand;
 *   never          a scheduled group without a snapshot yet, before its first deadline;
 *   due / fresh    as the groups' freshness says.
 * A host is worst-of-its-groups: one fresh group does not make another group's paths safe.
 * "Unprotected" (the dashboard's count and `/hosts?state=unprotected`) is no_repository,
 * no_group, unscheduled or never: nothing of it is in a snapshot and nothing says it is late.
 * Overdue hosts are counted as overdue, not again here. The pages' words for each: web format.ts.
 */
import type { FreshnessState } from "./freshness.js";

export const PROTECTION_STATES = [
  "no_repository",
  "no_group",
  "overdue",
  "unscheduled",
  "never",
  "due",
  "fresh",
] as const;
export type Protection = (typeof PROTECTION_STATES)[number];

/** The reasons a host is unprotected, in the order the dashboard lists them. */
export const UNPROTECTED_REASONS = ["no_repository", "no_group", "unscheduled", "never"] as const;
export type UnprotectedReason = (typeof UNPROTECTED_REASONS)[number];

export function isUnprotected(protection: Protection): protection is UnprotectedReason {
  return (UNPROTECTED_REASONS as readonly string[]).includes(protection);
}

export function hostProtection(input: {
  hasRepository: boolean;
  groupStates: readonly FreshnessState[];
}): Protection {
  if (!input.hasRepository) {
    return "no_repository";
  }
  let worst: Protection = "no_group";
  let rank = Number.POSITIVE_INFINITY;
  for (const state of input.groupStates) {
    const at = PROTECTION_STATES.indexOf(state);
    if (at < rank) {
      rank = at;
      worst = state;
    }
  }
  return worst;
}

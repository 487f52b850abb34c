/**
 * @module metrics/group-freshness
 * The per source group metrics, taken from the freshness evaluator the dashboard uses
 * (freshness/freshness.ts), so /metrics and the pages never disagree on what is overdue.
 */
import type { GroupFreshness } from "../freshness/freshness.js";

export interface GroupMetric {
  hostId: string;
  hostName: string;
  groupName: string;
  /** Unix seconds of the group's newest snapshot; null before its first one. */
  lastSuccessSeconds: number | null;
  /** Seconds past the deadline, 0 while within it; null for a group no schedule fires. */
  overdueSeconds: number | null;
}

export function groupMetrics(groups: readonly GroupFreshness[]): GroupMetric[] {
  return groups.map((group) => ({
    hostId: group.hostId,
    hostName: group.hostName,
    groupName: group.groupName,
    lastSuccessSeconds: group.lastSnapshotAt === null ? null : group.lastSnapshotAt.getTime() / 1000,
    overdueSeconds:
      group.state === "unscheduled" || group.state === "never"
        ? null
        : group.state === "overdue"
          ? Math.max(0, group.overdueSeconds)
          : 0,
  }));
}

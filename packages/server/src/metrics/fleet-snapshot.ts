/**
 * @module metrics/fleet-snapshot
 * Everything /metrics reports about the fleet, read from the database at scrape time so that
 * every replica answers the same numbers. A scrape costs a fixed handful of aggregate queries
 * (plus the freshness evaluation), never one per host, all in one read-only snapshot so the
 * numbers agree with each other. Only hosts, groups and kinds leave this module: no credential
 * column is read.
 */
import {
  alerts,
  channelDigests,
  type DigestPeriod,
  hosts,
  notificationChannels,
  repoStats,
  repositoryOutages,
} from "@fleetback/db";
import { and, count, eq, isNotNull, isNull } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import { loadHostProblems } from "../freshness/host-states.js";
import { isUnprotected } from "../freshness/protection.js";
import { type JobOutcomeStats, readJobMetrics } from "../jobs/job-metrics.js";
import { type ProtectionCounts, protectionCounts } from "../keepers/protection-view.js";
import { readNotificationFailures } from "../notifications/notification-failures.js";
import { type GroupMetric, groupMetrics } from "./group-freshness.js";

export interface FleetSnapshot {
  hostsOnline: number;
  hostsOffline: number;
  /** Hosts with at least one overdue source group (freshness/host-states.ts). */
  hostsOverdue: number;
  /** Hosts with an open `*_failed` alert (freshness/host-states.ts). */
  hostsFailing: number;
  hostsUnprotected: number;
  groups: GroupMetric[];
  repositorySizes: { hostId: string; hostName: string; bytes: number }[];
  /** Every host, and whether its repository is in an outage (repository-outage.ts). */
  repositories: { hostId: string; hostName: string; unreachable: boolean }[];
  jobs: JobOutcomeStats[];
  openAlertsByKind: Map<string, number>;
  notificationFailuresByKind: Map<string, number>;
  /** Hosts protected by a keeper, and those not protected against deletion from the host. */
  protection: ProtectionCounts;
  /** Channels with a digest that has been delivered at least once, and when it last was. */
  digests: { channel: string; period: DigestPeriod; sentAt: Date }[];
}

export async function loadFleetSnapshot(
  deps: Pick<ServerDeps, "db" | "config">,
  now: Date,
): Promise<FleetSnapshot> {
  return deps.db.transaction(
    async (tx) => {
      const byStatus = await tx
        .select({ status: hosts.status, hosts: count() })
        .from(hosts)
        .groupBy(hosts.status);
      const openAlerts = await tx
        .select({ kind: alerts.kind, open: count() })
        .from(alerts)
        .where(isNull(alerts.resolvedAt))
        .groupBy(alerts.kind);
      const sizes = await tx
        // The stored size (restic's raw-data total_size, wire raw_size_bytes), as the dashboard
        // shows it; the uncompressed one (total_size_bytes) is unknown for restic 0.14.
        .select({ hostId: hosts.id, hostName: hosts.name, bytes: repoStats.rawSizeBytes })
        .from(repoStats)
        .innerJoin(hosts, eq(hosts.id, repoStats.hostId))
        .where(isNotNull(repoStats.rawSizeBytes));
      const repositories = await tx
        .select({ hostId: hosts.id, hostName: hosts.name, outage: repositoryOutages.hostId })
        .from(hosts)
        .leftJoin(repositoryOutages, eq(repositoryOutages.hostId, hosts.id));
      const { groups, problems } = await loadHostProblems({ db: tx, config: deps.config }, now);
      const digests = await tx
        .select({
          channel: notificationChannels.name,
          period: notificationChannels.digestPeriod,
          sentAt: channelDigests.sentAt,
        })
        .from(channelDigests)
        .innerJoin(notificationChannels, eq(notificationChannels.id, channelDigests.channelId))
        .where(and(isNotNull(notificationChannels.digestPeriod), isNotNull(channelDigests.sentAt)));
      return {
        hostsOnline: byStatus.find((row) => row.status === "online")?.hosts ?? 0,
        hostsOffline: byStatus.find((row) => row.status === "offline")?.hosts ?? 0,
        hostsOverdue: problems.overdue.size,
        hostsFailing: problems.failing.size,
        hostsUnprotected: [...problems.protection.values()].filter(isUnprotected).length,
        groups: groupMetrics(groups),
        repositorySizes: sizes.map((row) => ({
          hostId: row.hostId,
          hostName: row.hostName,
          bytes: Number(row.bytes),
        })),
        repositories: repositories.map((row) => ({
          hostId: row.hostId,
          hostName: row.hostName,
          unreachable: row.outage !== null,
        })),
        jobs: await readJobMetrics(tx),
        openAlertsByKind: new Map(openAlerts.map((row) => [row.kind, row.open])),
        notificationFailuresByKind: await readNotificationFailures(tx),
        protection: await protectionCounts(tx),
        digests: digests.flatMap((row) =>
          row.period && row.sentAt ? [{ channel: row.channel, period: row.period, sentAt: row.sentAt }] : [],
        ),
      };
    },
    { isolationLevel: "repeatable read", accessMode: "read only" },
  );
}

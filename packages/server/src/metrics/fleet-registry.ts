/**
 * @module metrics/fleet-registry
 * Turns one FleetSnapshot into prom-client metrics on a registry of its own. A registry per
 * scrape holds no state between scrapes, so two scrapes at once can never mix their numbers.
 * Labels are bounded by the fleet: host (its name, plus host_id because two hosts may share a
 * name and duplicate series would fail the whole scrape) and source group; kinds, outcomes and
 * states come from fixed lists.
 */
import { ACTIVE_JOB_STATUSES, JOB_KINDS, JOB_STATUSES, NOTIFICATION_CHANNEL_KINDS } from "@fleetback/db";
import { Counter, Gauge, Histogram, type HistogramConfiguration, type Registry } from "prom-client";
import { ALERT_KINDS } from "../alerts/alerts.js";
import { HOST_STATES } from "../freshness/host-states.js";
import { JOB_DURATION_BUCKETS_SECONDS, type JobOutcomeStats } from "../jobs/job-metrics.js";
import type { FleetSnapshot } from "./fleet-snapshot.js";

/** Final statuses: the `outcome` label of the job metrics. */
export const JOB_OUTCOMES = JOB_STATUSES.filter(
  (status) => !(ACTIVE_JOB_STATUSES as readonly string[]).includes(status),
);

type DurationLabel = "kind" | "outcome" | "le";

const JOB_DURATION_NAME = "fleetback_job_duration_seconds";

function jobDurationConfig(): HistogramConfiguration<DurationLabel> {
  return {
    name: JOB_DURATION_NAME,
    help: "Run time of finished jobs that an agent started, by kind and outcome (final status).",
    labelNames: ["kind", "outcome"],
    buckets: [...JOB_DURATION_BUCKETS_SECONDS],
    registers: [],
  };
}

/**
 * A histogram whose buckets come from the database rather than from observe(). prom-client's
 * registry prints a histogram through getForPromString (absent from its typings) and its JSON
 * through get(); both answer the stored counts.
 */
class StoredJobDurations extends Histogram<DurationLabel> {
  readonly #stats: readonly JobOutcomeStats[];

  constructor(stats: readonly JobOutcomeStats[]) {
    super(jobDurationConfig());
    this.#stats = stats;
  }

  override async get() {
    // An empty histogram of the same name gives the header fields in prom-client's own form.
    const template = await new Histogram(jobDurationConfig()).get();
    const values = this.#stats
      .filter((stats) => stats.observed > 0)
      .flatMap((stats) => {
        const labels = { kind: stats.kind, outcome: stats.outcome };
        return [
          ...JOB_DURATION_BUCKETS_SECONDS.map((bound, index) => ({
            metricName: `${JOB_DURATION_NAME}_bucket`,
            labels: { ...labels, le: bound },
            value: stats.buckets[index] ?? 0,
          })),
          {
            metricName: `${JOB_DURATION_NAME}_bucket`,
            labels: { ...labels, le: "+Inf" },
            value: stats.observed,
          },
          { metricName: `${JOB_DURATION_NAME}_sum`, labels, value: stats.durationSecondsSum },
          { metricName: `${JOB_DURATION_NAME}_count`, labels, value: stats.observed },
        ];
      });
    return { ...template, values };
  }

  getForPromString() {
    return this.get();
  }
}

export function fleetRegistry(snapshot: FleetSnapshot, registry: Registry): Registry {
  const registers = [registry];

  const hostStates = new Gauge({
    name: "fleetback_hosts",
    help: "Hosts by state. online and offline divide the fleet; overdue (a scheduled source group past its deadline) and failing (an open *_failed or repository_unreachable alert) count hosts of either; unprotected: no repository, no group, an unscheduled group or one never backed up.",
    labelNames: ["state"],
    registers,
  });
  const byState = {
    online: snapshot.hostsOnline,
    offline: snapshot.hostsOffline,
    overdue: snapshot.hostsOverdue,
    failing: snapshot.hostsFailing,
    unprotected: snapshot.hostsUnprotected,
  } satisfies Record<(typeof HOST_STATES)[number], number>;
  for (const state of HOST_STATES) {
    hostStates.set({ state }, byState[state]);
  }

  const protection = new Gauge({
    name: "fleetback_hosts_deletion_protection",
    help: "Hosts by deletion protection: protected (a keeper maintains the repository; the host holds no delete-capable credential) or unprotected (whoever controls the host can delete its backups).",
    labelNames: ["state"],
    registers,
  });
  protection.set({ state: "protected" }, snapshot.protection.protected);
  protection.set({ state: "unprotected" }, snapshot.protection.unprotected);
  new Gauge({
    name: "fleetback_hosts_deletion_held",
    help: "Hosts with an open deletion hold (a backup that looked like an attack, or a large forget waiting for approval): no forget or prune runs for them until an admin releases it.",
    registers,
  }).set(snapshot.protection.held);

  new Gauge({
    name: "fleetback_agents_connected",
    help: "Hosts whose agent is connected to any server replica (online in the database).",
    registers,
  }).set(snapshot.hostsOnline);

  const lastSuccess = new Gauge({
    name: "fleetback_group_last_success_timestamp_seconds",
    help: "Unix time of the newest snapshot of a source group; absent before its first snapshot.",
    labelNames: ["host", "host_id", "group"],
    registers,
  });
  const overdue = new Gauge({
    name: "fleetback_group_overdue_seconds",
    help: "Seconds a scheduled source group is past its deadline for a new snapshot; 0 while it is not overdue.",
    labelNames: ["host", "host_id", "group"],
    registers,
  });
  for (const group of snapshot.groups) {
    const labels = { host: group.hostName, host_id: group.hostId, group: group.groupName };
    if (group.lastSuccessSeconds !== null) {
      lastSuccess.set(labels, group.lastSuccessSeconds);
    }
    if (group.overdueSeconds !== null) {
      overdue.set(labels, group.overdueSeconds);
    }
  }

  const jobsTotal = new Counter({
    name: "fleetback_jobs_total",
    help: "Jobs that ended, by kind and outcome (final status), including those that ended before an agent started them.",
    labelNames: ["kind", "outcome"],
    registers,
  });
  // Every known series exists from the start, so rate() sees a job's first failure.
  for (const kind of JOB_KINDS) {
    for (const outcome of JOB_OUTCOMES) {
      jobsTotal.inc({ kind, outcome }, 0);
    }
  }
  for (const stats of snapshot.jobs) {
    jobsTotal.inc({ kind: stats.kind, outcome: stats.outcome }, stats.total);
  }
  registry.registerMetric(new StoredJobDurations(snapshot.jobs));

  const repositorySize = new Gauge({
    name: "fleetback_repository_size_bytes",
    help: "Bytes a host's repository stores (compressed, deduplicated) as restic last reported it (stats --mode raw-data total_size).",
    labelNames: ["host", "host_id"],
    registers,
  });
  for (const repository of snapshot.repositorySizes) {
    repositorySize.set({ host: repository.hostName, host_id: repository.hostId }, repository.bytes);
  }

  const reachable = new Gauge({
    name: "fleetback_repository_reachable",
    help: "1 while a host's repository answers as far as the server knows; 0 from the first job that found it unreachable (the agent stopped restic after a minute without an answer) until a job of the host reaches it again.",
    labelNames: ["host", "host_id"],
    registers,
  });
  for (const repository of snapshot.repositories) {
    const labels = { host: repository.hostName, host_id: repository.hostId };
    reachable.set(labels, repository.unreachable ? 0 : 1);
  }

  const alertsOpen = new Gauge({
    name: "fleetback_alerts_open",
    help: "Open alerts by kind.",
    labelNames: ["kind"],
    registers,
  });
  for (const kind of new Set<string>([...ALERT_KINDS, ...snapshot.openAlertsByKind.keys()])) {
    alertsOpen.set({ kind }, snapshot.openAlertsByKind.get(kind) ?? 0);
  }

  const notificationFailures = new Counter({
    name: "fleetback_notification_failures_total",
    help: "Alert notifications that failed after their retries, by channel kind.",
    labelNames: ["channel_kind"],
    registers,
  });
  for (const kind of new Set<string>([
    ...NOTIFICATION_CHANNEL_KINDS,
    ...snapshot.notificationFailuresByKind.keys(),
  ])) {
    notificationFailures.inc({ channel_kind: kind }, snapshot.notificationFailuresByKind.get(kind) ?? 0);
  }

  const digestSent = new Gauge({
    name: "fleetback_digest_last_sent_timestamp_seconds",
    help: "Unix time the fleet digest of a notification channel was last delivered; absent before its first. A digest goes out even when nothing happened, so one older than its period is the alarm.",
    labelNames: ["channel", "period"],
    registers,
  });
  for (const digest of snapshot.digests) {
    digestSent.set({ channel: digest.channel, period: digest.period }, digest.sentAt.getTime() / 1000);
  }
  return registry;
}

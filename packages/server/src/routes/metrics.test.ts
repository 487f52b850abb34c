import { hashToken } from "@fleetback/crypto";
import {
  alerts,
  hosts,
  type JobKind,
  notificationChannels,
  repoStats,
  scheduleSourceGroups,
  schedules,
  snapshotTags,
  sourceGroups,
} from "@fleetback/db";
import { testEngines } from "@fleetback/db/testing";
import type { FinishedJobStatus } from "@fleetback/protocol";
import { eq, sql } from "drizzle-orm";
import { ulid } from "ulidx";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { raiseAlert } from "../alerts/alerts.js";
import { evaluateFreshness } from "../freshness/freshness.js";
import { cancelJob } from "../jobs/cancel-job.js";
import { createJob } from "../jobs/create-job.js";
import { JOB_DURATION_BUCKETS_SECONDS } from "../jobs/job-metrics.js";
import { createServerJobReports } from "../jobs/job-reports.js";
import { reconcileRunningJobs } from "../jobs/reconcile-jobs.js";
import { parseExposition, seriesValue } from "../metrics/test-exposition-parser.js";
import { recordAttempt } from "../notifications/notification-log.js";
import { bindCredentials, seedAuditContext, seedHost } from "../testing/seed.js";
import { startTestServer, type TestServer } from "../testing/test-server.js";

const TOKEN = "metrics-token-0123456789abcdef";
const REPO_PASSWORD = "repo-password-must-never-show-9f3k";
const NOW = new Date("2026-11-21T12:00:00Z");
const HOUR = 3_600_000;

for (const engine of testEngines()) {
  describe(`GET /metrics (${engine})`, () => {
    let server: TestServer;

    beforeEach(async () => {
      server = await startTestServer({
        engine,
        config: {
          metricsTokenHash: hashToken(TOKEN),
          metricsAllowNetworks: ["10.1.0.0/16", "fd00:1::/64"],
          // The test client is 127.0.0.1: as a trusted proxy its X-Forwarded-For names the client.
          trustedProxies: ["127.0.0.1"],
        },
      });
    });
    afterEach(async () => {
      await server.close();
    });

    const scrape = (headers: Record<string, string> = { Authorization: `Bearer ${TOKEN}` }) =>
      fetch(`${server.url}/metrics`, { headers });

    it("answers 401 with a Bearer challenge without the token or an allowed address, 200 with either", async () => {
      const refusals: Record<string, string>[] = [
        {},
        { Authorization: "Bearer metrics-token-0123456789abcdeX" },
        { Authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` },
        { Authorization: `Bearer ${TOKEN}`.slice(0, -1) },
        { "X-Forwarded-For": "10.2.0.9" },
        { "X-Forwarded-For": "fd00:2::1" },
      ];
      for (const headers of refusals) {
        const res = await scrape(headers);
        expect(res.status, JSON.stringify(headers)).toBe(401);
        expect(res.headers.get("WWW-Authenticate")).toMatch(/^Bearer /);
        expect(await res.text()).not.toContain("fleetback_hosts");
      }
      const admitted: Record<string, string>[] = [
        { Authorization: `Bearer ${TOKEN}` },
        { "X-Forwarded-For": "10.1.200.3" },
        { "X-Forwarded-For": "fd00:1::7" },
        // A forged header from outside the allow-list is read only through the trusted hop.
        { "X-Forwarded-For": "10.1.0.1, 192.0.2.5", Authorization: `Bearer ${TOKEN}` },
      ];
      for (const headers of admitted) {
        const res = await scrape(headers);
        expect(res.status, JSON.stringify(headers)).toBe(200);
        expect(res.headers.get("Content-Type")).toBe("text/plain; version=0.0.4; charset=utf-8");
        expect(res.headers.get("Cache-Control")).toBe("no-store");
      }
      // The forged hop alone: 192.0.2.5 is the client, not in the list.
      expect((await scrape({ "X-Forwarded-For": "10.1.0.1, 192.0.2.5" })).status).toBe(401);
    });

    it("reports hosts, jobs, repositories, alerts, notification failures and groups as the database has them", async () => {
      const { deps } = server;
      deps.clock.set(new Date(NOW.getTime() - 6 * HOUR));
      const web1 = (await seedHost(deps, { name: "web-1", status: "online" })).host;
      const web2 = (await seedHost(deps, { name: "web-2", status: "online" })).host;
      // Two hosts of one name: host_id keeps their series apart.
      const db1 = (await seedHost(deps, { name: "db-1", status: "offline" })).host;
      const db1b = (await seedHost(deps, { name: "db-1", status: "offline" })).host;
      await bindCredentials(deps, web1.id, {
        repo: { url: "rest:https://backup.example.org/web-1/", username: "web-1", password: REPO_PASSWORD },
      });

      // Jobs through the paths that end them: agent reports, reconciliation, the server's cancel.
      const reports = createServerJobReports(deps);
      const run = async (hostId: string, kind: JobKind, seconds: number, status: FinishedJobStatus) => {
        const job = await createJob(deps, { hostId, kind, actorKind: "user" });
        await reports.started(hostId, { job_id: job.id, kind, started_at: deps.clock.now().toISOString() });
        deps.clock.advance(seconds * 1000);
        await reports.finished(hostId, { job_id: job.id, status, exit_code: status === "succeeded" ? 0 : 1 });
        return job;
      };
      await run(web1.id, "backup", 90, "succeeded");
      await run(web1.id, "backup", 100, "succeeded");
      await run(web1.id, "backup", 2, "failed");
      await run(web2.id, "check", 4_000, "succeeded");
      await run(web2.id, "backup", 200_000, "succeeded");
      const finishedTwice = await run(web2.id, "prune", 10, "succeeded");
      // A repeated job.finished changes nothing and counts nothing.
      await reports.finished(web2.id, { job_id: finishedTwice.id, status: "succeeded", exit_code: 0 });

      const forget = await createJob(deps, { hostId: web2.id, kind: "forget", actorKind: "schedule" });
      await reports.started(web2.id, {
        job_id: forget.id,
        kind: "forget",
        started_at: deps.clock.now().toISOString(),
      });
      deps.clock.advance(30_000);
      const reconciled = await reconcileRunningJobs(
        deps.db,
        web2.id,
        [],
        deps.clock.now(),
        "agent restarted",
      );
      // As the agent channel does: the lost job raises its alert, and is not counted again.
      await reports.lost(web2.id, reconciled.lost, "agent restarted", deps.clock.now());

      const queued = await createJob(deps, { hostId: db1.id, kind: "prune", actorKind: "user" });
      await cancelJob(deps, await seedAuditContext(deps), queued.id);
      await reports.close();

      await deps.db.insert(repoStats).values([
        // The stored size; the uncompressed one is no repository size (and 0.14 has none).
        { hostId: web1.id, rawSizeBytes: 1_000, totalSizeBytes: 3_000 },
        { hostId: web2.id, rawSizeBytes: 5_000_000_000 },
        // A host whose size restic has not reported yet has no series.
        { hostId: db1.id, lastCheckStatus: "ok" },
      ]);

      // The failed backup above opened backup_failed on web-1; two more by hand, one resolved.
      await raiseAlert(
        deps,
        { hostId: web1.id, kind: "backup_failed", dedupKey: "g1" },
        { message: "x" },
        NOW,
      );
      await raiseAlert(deps, { hostId: db1.id, kind: "check_failed", dedupKey: "" }, { message: "x" }, NOW);
      const resolved = await raiseAlert(
        deps,
        { hostId: db1b.id, kind: "prune_failed", dedupKey: "" },
        { message: "x" },
        NOW,
      );
      await deps.db.update(alerts).set({ resolvedAt: NOW }).where(eq(alerts.id, resolved.alert.id));

      // Delivery failures: final ones count, retries and channel tests do not, and a deleted
      // channel keeps its count.
      const channel = async (kind: "webhook" | "slack" | "email") => {
        const id = ulid();
        await deps.db.insert(notificationChannels).values({
          id,
          name: `${kind}-${id}`,
          kind,
          sealedConfig: new Uint8Array([1, 2, 3]),
          enabled: false,
        });
        return id;
      };
      const webhook = await channel("webhook");
      const slack = await channel("slack");
      const email = await channel("email");
      const attempt = (
        channelId: string,
        status: "failed" | "retrying" | "sent",
        event: "alert.opened" | "test",
      ) =>
        recordAttempt(deps.db, {
          id: ulid(),
          at: NOW,
          channelId,
          alertId: null,
          event,
          attempt: 1,
          status,
        });
      await attempt(webhook, "retrying", "alert.opened");
      await attempt(webhook, "failed", "alert.opened");
      await attempt(webhook, "failed", "alert.opened");
      await attempt(webhook, "failed", "test");
      await attempt(slack, "failed", "alert.opened");
      await attempt(email, "sent", "alert.opened");
      await deps.db.delete(notificationChannels).where(eq(notificationChannels.id, slack));

      // Freshness: a daily 02:00 backup whose last snapshot is three days old, one from last
      // night, and a group no schedule fires.
      deps.clock.set(NOW);
      const group = async (hostId: string, name: string, latest: Date | null, cron: string | null) => {
        const id = ulid();
        const since = new Date(NOW.getTime() - 30 * 24 * HOUR);
        await deps.db.insert(sourceGroups).values({ id, hostId, name, includes: ["/srv"], createdAt: since });
        if (cron) {
          const scheduleId = ulid();
          await deps.db
            .insert(schedules)
            .values({ id: scheduleId, hostId, cron, createdAt: since, updatedAt: since });
          await deps.db.insert(scheduleSourceGroups).values({ scheduleId, sourceGroupId: id });
        }
        if (latest) {
          await deps.db
            .insert(snapshotTags)
            .values({ hostId, tag: name, latestAt: latest, snapshotCount: 3 });
        }
      };
      await group(web1.id, "home", new Date("2026-11-18T02:05:00Z"), "0 2 * * *");
      await group(web1.id, "etc", new Date("2026-11-21T02:10:00Z"), "0 2 * * *");
      await group(web2.id, "scratch", new Date("2026-11-20T09:00:00Z"), null);
      await group(db1b.id, "never", null, null);

      const res = await scrape();
      expect(res.status).toBe(200);
      const text = await res.text();
      for (const secret of [REPO_PASSWORD, TOKEN, hashToken(TOKEN)]) {
        expect(text).not.toContain(secret);
      }
      const families = parseExposition(text);
      const value = (name: string, labels: Record<string, string> = {}) =>
        seriesValue(families, name, labels);

      expect(families.get("fleetback_hosts")?.type).toBe("gauge");
      expect(value("fleetback_hosts", { state: "online" })).toBe(2);
      expect(value("fleetback_hosts", { state: "offline" })).toBe(2);
      expect(value("fleetback_hosts", { state: "overdue" })).toBe(1);
      // web-1 (backup_failed), web-2 (forget_failed: a lost job) and db-1 (check_failed);
      // db-1b's alert is resolved.
      expect(value("fleetback_hosts", { state: "failing" })).toBe(3);
      expect(value("fleetback_agents_connected")).toBe(2);

      expect(families.get("fleetback_jobs_total")?.type).toBe("counter");
      expect(value("fleetback_jobs_total", { kind: "backup", outcome: "succeeded" })).toBe(3);
      expect(value("fleetback_jobs_total", { kind: "backup", outcome: "failed" })).toBe(1);
      expect(value("fleetback_jobs_total", { kind: "check", outcome: "succeeded" })).toBe(1);
      expect(value("fleetback_jobs_total", { kind: "prune", outcome: "succeeded" })).toBe(1);
      expect(value("fleetback_jobs_total", { kind: "forget", outcome: "lost" })).toBe(1);
      expect(value("fleetback_jobs_total", { kind: "prune", outcome: "cancelled" })).toBe(1);
      // Known series exist before their first job.
      expect(value("fleetback_jobs_total", { kind: "restore", outcome: "failed" })).toBe(0);

      expect(families.get("fleetback_job_duration_seconds")?.type).toBe("histogram");
      const bucket = (kind: string, outcome: string, le: string) =>
        value("fleetback_job_duration_seconds_bucket", { kind, outcome, le });
      // 90 s and 100 s fall in (60, 120]; 200,000 s is above the largest bound.
      expect(bucket("backup", "succeeded", "60")).toBe(0);
      expect(bucket("backup", "succeeded", "120")).toBe(2);
      expect(bucket("backup", "succeeded", "86400")).toBe(2);
      expect(bucket("backup", "succeeded", "+Inf")).toBe(3);
      expect(value("fleetback_job_duration_seconds_sum", { kind: "backup", outcome: "succeeded" })).toBe(
        200_190,
      );
      expect(value("fleetback_job_duration_seconds_count", { kind: "backup", outcome: "succeeded" })).toBe(3);
      expect(bucket("backup", "failed", "1")).toBe(0);
      expect(bucket("backup", "failed", "5")).toBe(1);
      expect(bucket("check", "succeeded", "3600")).toBe(0);
      expect(bucket("check", "succeeded", "7200")).toBe(1);
      expect(bucket("forget", "lost", "30")).toBe(1);
      expect(bucket("forget", "lost", "15")).toBe(0);
      // The cancelled prune never started: counted, but it has no duration to observe.
      expect(
        value("fleetback_job_duration_seconds_count", { kind: "prune", outcome: "cancelled" }),
      ).toBeUndefined();
      const labelsOf = families.get("fleetback_job_duration_seconds")?.samples.map((s) => s.labels.le) ?? [];
      expect(new Set(labelsOf)).toEqual(
        new Set([...JOB_DURATION_BUCKETS_SECONDS.map(String), "+Inf", undefined]),
      );

      expect(value("fleetback_repository_size_bytes", { host: "web-1", host_id: web1.id })).toBe(1_000);
      expect(value("fleetback_repository_size_bytes", { host: "web-2", host_id: web2.id })).toBe(
        5_000_000_000,
      );
      expect(families.get("fleetback_repository_size_bytes")?.samples).toHaveLength(2);

      expect(value("fleetback_alerts_open", { kind: "backup_failed" })).toBe(2);
      expect(value("fleetback_alerts_open", { kind: "check_failed" })).toBe(1);
      expect(value("fleetback_alerts_open", { kind: "forget_failed" })).toBe(1);
      expect(value("fleetback_alerts_open", { kind: "prune_failed" })).toBe(0);

      expect(families.get("fleetback_notification_failures_total")?.type).toBe("counter");
      expect(value("fleetback_notification_failures_total", { channel_kind: "webhook" })).toBe(2);
      expect(value("fleetback_notification_failures_total", { channel_kind: "slack" })).toBe(1);
      expect(value("fleetback_notification_failures_total", { channel_kind: "email" })).toBe(0);

      const expected = await evaluateFreshness(deps.db, NOW, { defaultTimeZone: deps.config.timeZone });
      const home = expected.find((g) => g.groupName === "home");
      expect(home?.state).toBe("overdue");
      const groupLabels = (host: { id: string; name: string }, name: string) => ({
        host: host.name,
        host_id: host.id,
        group: name,
      });
      expect(value("fleetback_group_overdue_seconds", groupLabels(web1, "home"))).toBe(home?.overdueSeconds);
      expect(home?.overdueSeconds).toBeGreaterThan(2 * 24 * 3600);
      expect(value("fleetback_group_overdue_seconds", groupLabels(web1, "etc"))).toBe(0);
      expect(value("fleetback_group_overdue_seconds", groupLabels(web2, "scratch"))).toBeUndefined();
      expect(value("fleetback_group_last_success_timestamp_seconds", groupLabels(web1, "home"))).toBe(
        Date.parse("2026-11-18T02:05:00Z") / 1000,
      );
      expect(value("fleetback_group_last_success_timestamp_seconds", groupLabels(web2, "scratch"))).toBe(
        Date.parse("2026-11-20T09:00:00Z") / 1000,
      );
      expect(
        value("fleetback_group_last_success_timestamp_seconds", groupLabels(db1b, "never")),
      ).toBeUndefined();

      // This replica's own process, from prom-client's default metrics.
      expect(families.get("process_cpu_user_seconds_total")?.type).toBe("counter");
      expect(families.get("nodejs_heap_size_used_bytes")?.type).toBe("gauge");
    });

    it("answers 503 and logs a warning when the database cannot answer the scrape", async () => {
      // A counter table that cannot be read stands for a database that does not answer.
      await server.deps.db.execute(sql`alter table job_metrics rename to job_metrics_away`);
      const res = await scrape();
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ code: "unavailable" });
      expect(server.deps.logLines.some((line) => line.includes("metrics scrape failed"))).toBe(true);
      await server.deps.db.execute(sql`alter table job_metrics_away rename to job_metrics`);
      expect((await scrape()).status).toBe(200);
    });

    it("keeps the counters when the hosts whose jobs they count are deleted", async () => {
      const { deps } = server;
      const host = (await seedHost(deps, { name: "gone-1" })).host;
      const queued = await createJob(deps, { hostId: host.id, kind: "backup", actorKind: "user" });
      await cancelJob(deps, await seedAuditContext(deps), queued.id);
      const before = parseExposition(await (await scrape()).text());
      expect(seriesValue(before, "fleetback_jobs_total", { kind: "backup", outcome: "cancelled" })).toBe(1);
      await deps.db.delete(hosts).where(eq(hosts.id, host.id));
      const after = parseExposition(await (await scrape()).text());
      expect(seriesValue(after, "fleetback_jobs_total", { kind: "backup", outcome: "cancelled" })).toBe(1);
      expect(seriesValue(after, "fleetback_hosts", { state: "offline" })).toBe(0);
    });
  });
}

describe("GET /metrics without FLEETBACK_METRICS_TOKEN or FLEETBACK_METRICS_ALLOW_NETWORKS", () => {
  it("answers 404 like an unknown path, whatever the request carries", async () => {
    const server = await startTestServer({
      config: { metricsTokenHash: undefined, metricsAllowNetworks: [] },
    });
    try {
      const requests: Record<string, string>[] = [{}, { Authorization: `Bearer ${TOKEN}` }];
      for (const headers of requests) {
        const res = await fetch(`${server.url}/metrics`, { headers });
        expect(res.status).toBe(404);
        expect(await res.text()).toBe("Not found");
      }
    } finally {
      await server.close();
    }
  });
});

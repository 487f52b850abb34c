/**
 * A repository that does not answer, inside the server (issue 31): an agent's job.finished with
 * repository_unreachable, over the real channel, opens the host's outage and its alert at once
 * (also when the backup is queued for a retry, and instead of the job's own alert), extends them
 * with each further such job, shows on the host page, the job page, GET /api/hosts/{id}, /metrics
 * and the failing hosts; the next job of the host that succeeds ends both and says why.
 */
import { alerts } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { Registry } from "prom-client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { failingHostIds } from "../freshness/host-states.js";
import { fleetRegistry } from "../metrics/fleet-registry.js";
import { loadFleetSnapshot } from "../metrics/fleet-snapshot.js";
import { createChannel } from "../notifications/channels.js";
import { loadOutage } from "../repository-outage/repository-outage.js";
import { listPendingRuns } from "../retries/pending-runs.js";
import { createGroup } from "../sources/source-groups.js";
import { type HttpReceiver, startHttpReceiver } from "../testing/http-receiver.js";
import { seedAuditContext, seedHost, seedJob } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { signInOn } from "../testing/signed-in-app.js";
import { connectAgent, jobEndHandled, type TestAgent } from "../testing/test-agent.js";

const UNREACHABLE =
  "the repository did not answer for 1 min (connection refused): it is unreachable; the agent stopped restic";

let webhook: HttpReceiver;
beforeAll(async () => {
  webhook = await startHttpReceiver();
});
afterAll(async () => {
  await webhook.close();
});

runServerSuite("a repository that does not answer", (server) => {
  let agent: TestAgent | undefined;

  async function finish(
    hostId: string,
    job: { kind: "backup" | "check"; groupId?: string; params?: Record<string, unknown> },
    payload: {
      status: "failed" | "succeeded";
      exit_code: number | null;
      error?: string;
      repository_unreachable?: boolean;
    },
  ) {
    const seeded = await seedJob(
      server.deps,
      { hostId, kind: job.kind, actorKind: "schedule", sourceGroupId: job.groupId ?? null },
      job.params === undefined ? {} : { params: job.params },
    );
    agent?.send("job.finished", { job_id: seeded.id, ...payload });
    await jobEndHandled(server, seeded.id);
    await server.deps.notifier.idle();
    return seeded;
  }

  const alertsOf = (hostId: string) => server.deps.db.select().from(alerts).where(eq(alerts.hostId, hostId));

  it("opens the outage and its alert at the first such job, retry or not, and ends both at the next success", async () => {
    // The bootstrap token signs in only while no admin exists: before any seeding.
    const { admin: viewer } = await signInOn(server.deps);
    const audit = await seedAuditContext(server.deps);
    await createChannel(server.deps, audit, {
      name: "hook-repository",
      kind: "webhook",
      config: { url: `${webhook.url}/fleetback`, secret: "webhook-secret-0123456789" },
      notifyResolved: true,
    });
    const before = webhook.requests.length;
    const { host, token } = await seedHost(server.deps, { name: "nas-1" });
    const group = await createGroup(server.deps, audit, host.id, {
      name: "etc",
      includes: ["/etc"],
      retry_max: 2,
    });
    agent = await connectAgent(server.wsUrl, token);
    agent.hello();
    await agent.waitFor((frame) => frame.type === "schedule.set");
    await server.channel.idle();
    try {
      const firstAt = server.deps.clock.now();
      const backup = await finish(
        host.id,
        { kind: "backup", groupId: group.id },
        { status: "failed", exit_code: null, error: UNREACHABLE, repository_unreachable: true },
      );
      // The backup is retried (it failed with no exit code, which alone would not be transient)...
      expect((await listPendingRuns(server.deps.db, host.id)).map((run) => run.lastJobId)).toEqual([
        backup.id,
      ]);
      // ...but not silently: the repository's alert is open, the backup's waits for the retry.
      expect((await alertsOf(host.id)).map((a) => [a.kind, a.message, a.resolvedAt])).toEqual([
        ["repository_unreachable", `backup job: ${UNREACHABLE}`, null],
      ]);
      expect(await loadOutage(server.deps.db, host.id)).toMatchObject({
        since: firstAt,
        lastJobId: backup.id,
        lastError: UNREACHABLE,
        failedJobs: 1,
      });
      const opened = await webhook.waitFor(before + 1);
      expect(JSON.parse(opened[before]?.body ?? "{}")).toMatchObject({
        event: "alert.opened",
        alert: { kind: "repository_unreachable", host_name: "nas-1" },
      });

      // A later one extends it; a failure for another reason, or on the mirror, says nothing of it.
      server.deps.clock.advance(300_000);
      const check = await finish(
        host.id,
        { kind: "check" },
        { status: "failed", exit_code: 1, error: UNREACHABLE, repository_unreachable: true },
      );
      await finish(
        host.id,
        { kind: "check" },
        { status: "failed", exit_code: 1, error: "Fatal: wrong password" },
      );
      await finish(
        host.id,
        { kind: "check", params: { on_mirror: true } },
        { status: "succeeded", exit_code: 0 },
      );
      expect(await loadOutage(server.deps.db, host.id)).toMatchObject({
        since: firstAt,
        lastJobId: check.id,
        failedJobs: 2,
      });
      // One cause, one alert: the unreachable check opened no check_failed; the wrong password did.
      expect(
        (await alertsOf(host.id))
          .filter((a) => a.resolvedAt === null)
          .map((a) => a.kind)
          .sort(),
      ).toEqual(["check_failed", "repository_unreachable"]);
      expect(webhook.requests.length).toBe(before + 2);
      expect(await failingHostIds(server.deps.db)).toContain(host.id);

      const hostPage = await (await viewer.request(`/hosts/${host.id}`)).text();
      expect(hostPage).toContain('data-testid="host-repository-unreachable"');
      expect(hostPage).toContain("<strong>The repository is unreachable</strong> since");
      expect(hostPage).toContain(
        `<span data-testid="host-repository-unreachable-error">${UNREACHABLE}</span>`,
      );
      expect(hostPage).toContain(`href="/jobs/${check.id}" data-testid="host-repository-unreachable-job"`);
      const checkPage = await (await viewer.request(`/jobs/${check.id}`)).text();
      expect(checkPage).toContain('data-testid="job-repository-unreachable"');
      expect(checkPage).toContain("this job is the last that found it so");
      const { host: detail } = (await (await viewer.request(`/api/hosts/${host.id}`)).json()) as {
        host: { repository_outage: unknown };
      };
      expect(detail.repository_outage).toEqual({
        since: firstAt.toISOString(),
        last_failed_at: server.deps.clock.now().toISOString(),
        last_error: UNREACHABLE,
        last_job_id: check.id,
        failed_jobs: 2,
      });
      const exposition = await fleetRegistry(
        await loadFleetSnapshot(server.deps, server.deps.clock.now()),
        new Registry(),
      ).metrics();
      expect(exposition).toContain(`fleetback_repository_reachable{host="nas-1",host_id="${host.id}"} 0`);

      // Any job of the host that succeeds reached the repository.
      await finish(host.id, { kind: "check" }, { status: "succeeded", exit_code: 0 });
      expect(await loadOutage(server.deps.db, host.id)).toBeUndefined();
      const repositoryAlert = (await alertsOf(host.id)).find((a) => a.kind === "repository_unreachable");
      expect(repositoryAlert?.resolvedAt).not.toBeNull();
      const resolved = (await webhook.waitFor(before + 4))
        .slice(before + 2)
        .map((request) => JSON.parse(request.body));
      expect(resolved.map((body) => [body.event, body.alert.kind]).sort()).toEqual([
        ["alert.resolved", "check_failed"],
        ["alert.resolved", "repository_unreachable"],
      ]);
      const calm = await (await viewer.request(`/hosts/${host.id}`)).text();
      expect(calm).not.toContain('data-testid="host-repository-unreachable"');
      const after = await fleetRegistry(
        await loadFleetSnapshot(server.deps, server.deps.clock.now()),
        new Registry(),
      ).metrics();
      expect(after).toContain(`fleetback_repository_reachable{host="nas-1",host_id="${host.id}"} 1`);
    } finally {
      await agent.close();
      agent = undefined;
    }
  });
});

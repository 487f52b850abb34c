/**
 * Alerts end to end inside the server: job outcomes reported by an agent over the real
 * channel raise, re-raise and resolve alerts, and each new alert reaches a real local HTTP
 * receiver (webhook) and a real SMTP server exactly once.
 */
import { alerts, jobs, notificationLog } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { createChannel } from "../notifications/channels.js";
import { eventually } from "../testing/eventually.js";
import { createTestGroup, seedAuditContext, seedHost, seedJob } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { mailChannelConfig } from "../testing/smtp-receiver.js";
import { useSuiteReceivers } from "../testing/suite-receivers.js";
import { connectSettledAgent, jobEndHandled, type TestAgent } from "../testing/test-agent.js";
import { raiseAlert, resolveKey } from "./alerts.js";

const receivers = useSuiteReceivers();

runServerSuite("alerts from job outcomes", (server) => {
  let agent: TestAgent | undefined;

  const connected = (token: string) => connectSettledAgent(server, token);

  async function finish(
    hostId: string,
    groupId: string | null,
    kind: "backup" | "check",
    status: "failed" | "succeeded",
  ) {
    const job = await seedJob(server.deps, {
      hostId,
      kind,
      actorKind: "schedule",
      sourceGroupId: groupId,
    });
    agent?.send("job.finished", {
      job_id: job.id,
      status,
      exit_code: status === "failed" ? 3 : 0,
      ...(status === "failed" ? { error: `${kind} went wrong` } : {}),
    });
    await jobEndHandled(server, job.id);
    return job;
  }

  const openAlerts = (hostId: string) =>
    server.deps.db.select().from(alerts).where(eq(alerts.hostId, hostId));

  it("two failing groups give two alerts, each notified once; a repeat touches; a success resolves only its own", async () => {
    const audit = await seedAuditContext(server.deps);
    await createChannel(server.deps, audit, {
      name: `hook-${server.deps.config.baseUrl}`,
      kind: "webhook",
      config: { url: `${receivers.webhook.url}/fleetback`, secret: "webhook-secret-0123456789" },
    });
    await createChannel(server.deps, audit, {
      name: `mail-${server.deps.config.baseUrl}`,
      kind: "email",
      config: mailChannelConfig(receivers.smtp, ["ops@example.org"]),
    });
    const webhookBefore = receivers.webhook.requests.length;
    const mailBefore = receivers.smtp.messages.length;
    // The test agent says hello as web-1, which names the host.
    const { host, token } = await seedHost(server.deps, { name: "web-1" });
    const etc = await createTestGroup(server.deps, host.id, { retry_max: 0 });
    const home = await createTestGroup(server.deps, host.id, {
      name: "home",
      includes: ["/home"],
      retry_max: 0,
    });
    agent = await connected(token);
    try {
      await finish(host.id, etc.id, "backup", "failed");
      await finish(host.id, home.id, "backup", "failed");
      await server.deps.notifier.idle();
      const opened = await openAlerts(host.id);
      expect(opened.map((a) => [a.kind, a.dedupKey]).sort()).toEqual(
        [
          ["backup_failed", etc.id],
          ["backup_failed", home.id],
        ].sort(),
      );
      const received = await receivers.webhook.waitFor(webhookBefore + 2);
      const bodies = received
        .slice(webhookBefore)
        .map(
          (r) =>
            JSON.parse(r.body) as { event: string; alert: { source_group_name: string; host_name: string } },
        );
      expect(bodies.map((b) => [b.event, b.alert.host_name, b.alert.source_group_name]).sort()).toEqual([
        ["alert.opened", "web-1", "etc"],
        ["alert.opened", "web-1", "home"],
      ]);
      const mails = await receivers.smtp.waitFor(mailBefore + 2);
      expect(
        mails.slice(mailBefore).every((m) => m.to.includes("ops@example.org") && m.raw.includes("web-1")),
      ).toBe(true);

      // A third failure of one group: same alert, later last_seen_at, new message, no notification.
      const etcAlert = opened.find((a) => a.dedupKey === etc.id);
      server.deps.clock.advance(60_000);
      const third = await finish(host.id, etc.id, "backup", "failed");
      await server.deps.notifier.idle();
      const [touched] = await server.deps.db
        .select()
        .from(alerts)
        .where(eq(alerts.id, etcAlert?.id ?? ""));
      expect(touched?.lastSeenAt.getTime()).toBeGreaterThan(etcAlert?.lastSeenAt.getTime() ?? Infinity);
      expect(touched).toMatchObject({
        lastJobId: third.id,
        resolvedAt: null,
        message: "backup failed: backup went wrong",
      });
      expect(await openAlerts(host.id)).toHaveLength(2);
      expect(receivers.webhook.requests.length).toBe(webhookBefore + 2);
      expect(receivers.smtp.messages.length).toBe(mailBefore + 2);

      // etc's success resolves etc's alert only.
      await finish(host.id, etc.id, "backup", "succeeded");
      const after = await openAlerts(host.id);
      expect(after.find((a) => a.dedupKey === etc.id)?.resolvedAt).not.toBeNull();
      expect(after.find((a) => a.dedupKey === home.id)?.resolvedAt).toBeNull();
      // Channels without notify_resolved hear nothing of it.
      await server.deps.notifier.idle();
      expect(receivers.webhook.requests.length).toBe(webhookBefore + 2);
      const logged = await server.deps.db.select().from(notificationLog);
      expect(
        logged.filter((row) => row.status === "sent" && row.event === "alert.opened").length,
      ).toBeGreaterThanOrEqual(4);
    } finally {
      await agent.close();
      agent = undefined;
    }
  });

  it("repository jobs alert with an empty key; a cancel touches nothing; a queued retry waits", async () => {
    const { host, token } = await seedHost(server.deps, { name: "db-02" });
    const group = await createTestGroup(server.deps, host.id, { retry_max: 2 });
    agent = await connected(token);
    try {
      await finish(host.id, null, "check", "failed");
      expect(await openAlerts(host.id)).toEqual([
        expect.objectContaining({ kind: "check_failed", dedupKey: "", resolvedAt: null }),
      ]);
      // A transient failure (exit 1, lock) is retried first: no alert yet.
      const job = await seedJob(server.deps, {
        hostId: host.id,
        kind: "backup",
        actorKind: "schedule",
        sourceGroupId: group.id,
      });
      agent.send("job.finished", {
        job_id: job.id,
        status: "failed",
        exit_code: 1,
        error: "unable to create lock in backend",
      });
      await server.channel.idle();
      const cancelled = await seedJob(server.deps, {
        hostId: host.id,
        kind: "backup",
        actorKind: "user",
        sourceGroupId: group.id,
      });
      agent.send("job.finished", { job_id: cancelled.id, status: "cancelled", exit_code: null });
      await jobEndHandled(server, cancelled.id);
      expect((await openAlerts(host.id)).map((a) => a.kind)).toEqual(["check_failed"]);
      await finish(host.id, null, "check", "succeeded");
      await eventually(
        () => openAlerts(host.id),
        (rows) => rows.every((a) => a.resolvedAt !== null),
        { what: "check alert resolved" },
      );
      const [row] = await server.deps.db.select().from(jobs).where(eq(jobs.id, cancelled.id));
      expect(row?.status).toBe("cancelled");
    } finally {
      await agent.close();
      agent = undefined;
    }
  });

  it("keeps one open alert per key under concurrent raises (the database enforces it)", async () => {
    const { host } = await seedHost(server.deps, { name: "db-03" });
    const key = { hostId: host.id, kind: "prune_failed" as const, dedupKey: "" };
    const now = server.deps.clock.now();
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, (_, i) => raiseAlert(server.deps, key, { message: `try ${i}` }, now)),
    );
    expect(outcomes.filter((o) => o.opened)).toHaveLength(1);
    expect(await openAlerts(host.id)).toHaveLength(1);
    expect(await resolveKey(server.deps.db, key, now)).toBeDefined();
    expect((await raiseAlert(server.deps, key, { message: "again" }, now)).opened).toBe(true);
    expect(await openAlerts(host.id)).toHaveLength(2);
  });
});

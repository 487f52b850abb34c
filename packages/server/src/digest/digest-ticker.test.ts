/**
 * Issue 39.1 acceptance: with the manual clock, a fleet with one overdue host and one failed
 * drill gets a digest at each channel's local time that names both, delivered to a real webhook
 * receiver and a real SMTP server; the next day's digest says they resolved. A slot is sent once
 * however many servers tick, and a disabled channel or one without a digest gets none.
 */
import { createHmac } from "node:crypto";
import { channelDigests, hosts, notificationLog } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { loadFleetSnapshot } from "../metrics/fleet-snapshot.js";
import { createChannel, updateChannel } from "../notifications/channels.js";
import { reportSnapshots, seedScheduledGroup } from "../testing/health-test-support.js";
import { seedAuditContext, seedHost, seedJob } from "../testing/seed.js";
import { mailChannelConfig, mailParts } from "../testing/smtp-receiver.js";
import { useSuiteReceivers } from "../testing/suite-receivers.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";
import { digestTick } from "./digest-ticker.js";

const SECRET = "digest-signing-secret-0123";
const HOUR = 3_600_000;

runDbSuite("fleet digest delivery", (getDb) => {
  const receivers = useSuiteReceivers();

  async function tickAndDeliver(deps: TestDeps) {
    const report = await digestTick(deps, deps.clock.now());
    await deps.notifier.idle();
    return report;
  }

  it("names the overdue host and the failed drill at 08:00 local, then says they resolved", async () => {
    // 08:00 in Berlin is 07:00 UTC in November.
    const deps: TestDeps = await createTestDeps({ db: getDb(), config: { timeZone: "Europe/Berlin" } });
    receivers.clear();
    const audit = await seedAuditContext(deps);
    const daily = { period: "daily", time: "08:00" } as const;
    const hook = await createChannel(deps, audit, {
      name: "ops-hook",
      kind: "webhook",
      digest: daily,
      config: { url: `${receivers.webhook.url}/digest`, secret: SECRET },
    });
    await createChannel(deps, audit, {
      name: "ops-mail",
      kind: "email",
      digest: daily,
      config: mailChannelConfig(receivers.smtp, ["ops@example.org"]),
    });
    await createChannel(deps, audit, {
      name: "ops-slack",
      kind: "slack",
      digest: daily,
      config: { url: `${receivers.webhook.url}/slack` },
    });
    const quiet = await createChannel(deps, audit, {
      name: "alerts-only",
      kind: "webhook",
      config: { url: `${receivers.webhook.url}/alerts`, secret: SECRET },
    });
    const off = await createChannel(deps, audit, {
      name: "switched-off",
      kind: "webhook",
      enabled: false,
      digest: daily,
      config: { url: `${receivers.webhook.url}/off`, secret: SECRET },
    });

    // 2026-11-21 12:00 UTC: hourly backups never made (overdue from 14:00); db's drill fails at 15:00.
    const { host: web } = await seedScheduledGroup(deps, { hostName: "web-1", cron: "0 * * * *" });
    const { host: db } = await seedHost(deps, { name: "db-1" });
    await deps.db.update(hosts).set({ status: "online" });
    deps.clock.advance(3 * HOUR);
    await seedJob(
      deps,
      { hostId: db.id, kind: "drill", actorKind: "schedule" },
      { status: "failed", finishedAt: deps.clock.now() },
    );

    // Today's 08:00 had passed when the digests were set: the first is tomorrow's.
    expect((await tickAndDeliver(deps)).queued).toEqual([]);
    deps.clock.set(new Date("2026-11-22T06:59:00Z"));
    expect((await tickAndDeliver(deps)).queued).toEqual([]);
    deps.clock.set(new Date("2026-11-22T07:00:00Z"));
    // Two servers tick at once: the slot is taken once.
    const [a, b] = await Promise.all([
      digestTick(deps, deps.clock.now()),
      digestTick(deps, deps.clock.now()),
    ]);
    expect([...a.queued, ...b.queued].sort()).toHaveLength(3);
    await deps.notifier.idle();
    expect((await tickAndDeliver(deps)).queued).toEqual([]);

    await receivers.webhook.waitFor(2);
    expect(receivers.webhook.requests.map((r) => r.path).sort()).toEqual(["/digest", "/slack"]);
    const request = receivers.webhook.requests.find((r) => r.path === "/digest");
    // Chat gets its own markup: the verdict in bold, a sentence a line, the link as a Slack link.
    const slack = JSON.parse(receivers.webhook.requests.find((r) => r.path === "/slack")?.body ?? "{}");
    expect(slack.text).toMatch(/^\*Fleetback: 2 things need attention \(1 overdue, 1 failed drill\)\*\n/);
    expect(slack.text).toContain("\nNeeds attention: 1 overdue: web-1.\n");
    expect(slack.text).toMatch(/<http:\/\/127\.0\.0\.1:8080\/hosts\|Open in Fleetback>$/);
    expect(request?.headers["x-fleetback-event"]).toBe("digest");
    const body = request?.body ?? "";
    expect(request?.headers["x-fleetback-signature"]).toBe(
      `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`,
    );
    const payload = JSON.parse(body);
    expect(payload.event).toBe("digest");
    expect(payload.period).toBe("daily");
    expect(payload.digest.overdue).toEqual({ count: 1, names: ["web-1"] });
    expect(payload.digest.drills.failed).toEqual({ count: 1, names: ["db-1"] });
    expect(payload.digest.all_well).toBe(false);
    // What the digest keeps for the next one (every host id) is not sent.
    expect(payload.digest.state).toBeUndefined();

    const [mail] = await receivers.smtp.waitFor(1);
    const raw = mail?.raw ?? "";
    expect(raw.replace(/\r?\n[ \t]+/g, " ")).toMatch(
      /^Subject: \[Fleetback\] Fleetback: 2 things need attention \(1 overdue, 1 failed drill\)$/m,
    );
    expect(raw).toMatch(/Content-Type: multipart\/alternative/);
    expect(raw).toMatch(/Content-Type: text\/plain/);
    expect(raw).toMatch(/Content-Type: text\/html/);
    const parts = mailParts(raw);
    const text = parts.find((part) => /Content-Type: text\/plain/i.test(part.headers))?.body ?? "";
    const html = parts.find((part) => /Content-Type: text\/html/i.test(part.headers))?.body ?? "";
    expect(text).toContain("Needs attention: 1 overdue: web-1.");
    expect(text).toContain("Needs attention: 1 with a failed drill: db-1.");
    expect(text).toContain(`${deps.config.baseUrl}/hosts`);
    expect(html).toContain("<li>Needs attention: 1 overdue: web-1.</li>");

    // Delivered: the metric an absent digest alerts on has its time.
    const [kept] = await deps.db
      .select()
      .from(channelDigests)
      .where(eq(channelDigests.channelId, hook.row.id));
    expect(kept?.sentAt?.toISOString()).toBe("2026-11-22T07:00:00.000Z");
    expect(kept?.slotAt.toISOString()).toBe("2026-11-22T07:00:00.000Z");
    const snapshot = await loadFleetSnapshot(deps, deps.clock.now());
    expect(snapshot.digests.map((d) => d.channel).sort()).toEqual(["ops-hook", "ops-mail", "ops-slack"]);
    const logged = await deps.db.select().from(notificationLog).where(eq(notificationLog.event, "digest"));
    expect(logged.map((row) => row.status)).toEqual(["sent", "sent", "sent"]);
    expect(logged.some((row) => row.channelId === quiet.row.id || row.channelId === off.row.id)).toBe(false);

    // The next day: web backed up, db's drill passed.
    deps.clock.set(new Date("2026-11-23T06:00:00Z"));
    await seedJob(
      deps,
      { hostId: db.id, kind: "drill", actorKind: "schedule" },
      { status: "succeeded", finishedAt: deps.clock.now() },
    );
    deps.clock.set(new Date("2026-11-23T07:00:00Z"));
    await reportSnapshots(deps, web.id, [{ time: deps.clock.now().toISOString(), tags: ["etc"] }]);
    expect((await tickAndDeliver(deps)).queued).toHaveLength(3);
    await receivers.webhook.waitFor(4);
    const second = JSON.parse(
      receivers.webhook.requests.filter((r) => r.path === "/digest")[1]?.body ?? "{}",
    );
    expect(second.digest.all_well).toBe(true);
    expect(second.digest.since).toBe("2026-11-22T07:00:00.000Z");
    expect(second.digest.changes.resolved).toEqual({ count: 2, names: ["db-1", "web-1"] });
    const secondMail = (await receivers.smtp.waitFor(2))[1]?.raw ?? "";
    expect(secondMail.replace(/\r?\n[ \t]+/g, " ")).toMatch(
      /^Subject: \[Fleetback\] Fleetback: all well, 2 hosts backed up on time$/m,
    );
    expect(mailParts(secondMail).map((part) => part.body)).toContainEqual(
      expect.stringContaining("Since the last digest: 2 resolved: db-1, web-1."),
    );
    await deps.close();
  });

  it("sends a weekly digest on its day only, and a changed time counts from the change", async () => {
    const deps = await createTestDeps({ db: getDb() });
    receivers.webhook.requests.length = 0;
    const audit = await seedAuditContext(deps);
    // 2026-11-21 is a Saturday; weekly on Monday at 09:00 UTC.
    const channel = await createChannel(deps, audit, {
      name: "weekly-hook",
      kind: "webhook",
      digest: { period: "weekly", time: "09:00", weekday: 1 },
      config: { url: `${receivers.webhook.url}/weekly`, secret: SECRET },
    });
    deps.clock.set(new Date("2026-11-22T09:00:00Z"));
    expect((await tickAndDeliver(deps)).queued).toEqual([]);
    deps.clock.set(new Date("2026-11-23T09:00:00Z"));
    expect((await tickAndDeliver(deps)).queued).toEqual([channel.row.id]);
    const [weekly] = await receivers.webhook.waitFor(1);
    expect(JSON.parse(weekly?.body ?? "{}").period).toBe("weekly");

    // At 10:00 the time moves to 09:30 daily: today's 09:30 has passed, so nothing until tomorrow.
    deps.clock.set(new Date("2026-11-23T10:00:00Z"));
    await updateChannel(deps, audit, channel.row.id, { digest: { period: "daily", time: "09:30" } });
    expect((await tickAndDeliver(deps)).queued).toEqual([]);
    deps.clock.set(new Date("2026-11-24T09:30:00Z"));
    expect((await tickAndDeliver(deps)).queued).toEqual([channel.row.id]);
    // No digest any more: nothing is sent.
    await updateChannel(deps, audit, channel.row.id, { digest: null });
    deps.clock.set(new Date("2026-11-25T09:30:00Z"));
    expect((await tickAndDeliver(deps)).queued).toEqual([]);
    await deps.close();
  });
});

/**
 * @module notifications/notifier.test
 * The notifier's attempts at each kind of channel: the payload each one gets, retries and what
 * ends them, timeouts, which channels an event goes to, and what reaches the logs. The queue of
 * deliveries across channel edits, shutdowns, restarts and several servers is in
 * notifier-queue.test.ts.
 */
import { createHmac } from "node:crypto";
import { sealJson } from "@fleetback/crypto";
import { type Alert, notificationChannels } from "@fleetback/db";
import { ulid } from "ulidx";
import { beforeEach, expect, it } from "vitest";
import { type HttpReceiver, startHttpReceiver } from "../testing/http-receiver.js";
import { CANARY, clockTimers, useNotifierHarness } from "../testing/notifier-harness.js";
import { runServerSuite } from "../testing/server-suite.js";
import type { SmtpReceiver } from "../testing/smtp-receiver.js";

runServerSuite("notifier", (server) => {
  const harness = useNotifierHarness(server);
  const { context, channel, start, logRows, queued, settle, recorded } = harness;
  let receiver: HttpReceiver;
  let smtp: SmtpReceiver;
  let alert: Alert;
  beforeEach(() => {
    ({ receiver, smtp, alert } = harness);
  });

  it("sends webhook, slack, discord, ntfy and gotify payloads in their own shapes", async () => {
    const secret = `hmac-${CANARY}`;
    await channel({ name: "hook", kind: "webhook", config: { url: `${receiver.url}/hook`, secret } });
    await channel({ name: "slack", kind: "slack", config: { url: `${receiver.url}/slack/T0/B0/xyz` } });
    await channel({ name: "discord", kind: "discord", config: { url: `${receiver.url}/discord/1/abc` } });
    await channel({
      name: "ntfy",
      kind: "ntfy",
      config: { server_url: `${receiver.url}/ntfy/`, topic: "fleet-alerts", token: "tk_ntfy_token" },
    });
    await channel({
      name: "gotify",
      kind: "gotify",
      config: { server_url: `${receiver.url}/gotify`, token: "AbCgotifyToken", priority: 7 },
    });
    start().alertOpened(alert, context);
    await harness.notifier?.idle();

    const byPath = new Map(receiver.requests.map((req) => [req.path.split("/")[1], req]));
    expect(receiver.requests).toHaveLength(5);
    const link = `${server.deps.config.baseUrl}/hosts/${alert.hostId}`;

    const hook = byPath.get("hook");
    expect(hook?.headers["content-type"]).toBe("application/json");
    expect(hook?.headers["x-fleetback-event"]).toBe("alert.opened");
    const expected = `sha256=${createHmac("sha256", secret)
      .update(hook?.body ?? "")
      .digest("hex")}`;
    expect(hook?.headers["x-fleetback-signature"]).toBe(expected);
    expect(JSON.parse(hook?.body ?? "{}")).toMatchObject({
      event: "alert.opened",
      url: link,
      alert: {
        id: alert.id,
        kind: "backup_failed",
        dedup_key: "group-1",
        host_name: "db-01",
        source_group_name: "etc",
        message: alert.message,
        resolved_at: null,
      },
    });

    const slack = JSON.parse(byPath.get("slack")?.body ?? "{}") as { text: string };
    expect(Object.keys(slack)).toEqual(["text"]);
    expect(slack.text).toContain("backup_failed on db-01 (etc)");
    expect(slack.text).toContain(alert.message);
    expect(slack.text).toContain(`<${link}|`);

    const discord = JSON.parse(byPath.get("discord")?.body ?? "{}") as { content: string };
    // Escaped for Discord, which shows "backup_failed on db-01".
    expect(discord.content).toContain("backup\\_failed on db\\-01");
    expect(discord.content).toContain(link);

    const ntfy = byPath.get("ntfy");
    expect(ntfy?.path).toBe("/ntfy/fleet-alerts");
    expect(ntfy?.headers.title).toBe("backup_failed on db-01 (etc)");
    expect(ntfy?.headers.priority).toBe("4");
    expect(ntfy?.headers.tags).toBe("warning");
    expect(ntfy?.headers.click).toBe(link);
    expect(ntfy?.headers.authorization).toBe("Bearer tk_ntfy_token");
    expect(ntfy?.body).toBe(alert.message);

    const gotify = byPath.get("gotify");
    expect(gotify?.path).toBe("/gotify/message");
    expect(gotify?.headers["x-gotify-key"]).toBe("AbCgotifyToken");
    expect(JSON.parse(gotify?.body ?? "{}")).toMatchObject({
      title: "backup_failed on db-01 (etc)",
      message: `${alert.message}\n${link}`,
      priority: 7,
    });

    const rows = await logRows();
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      expect(row).toMatchObject({
        status: "sent",
        attempt: 1,
        alertId: alert.id,
        event: "alert.opened",
        error: null,
      });
      expect(row.statusCode).toBe(200);
    }
  });

  it("sends email through a real SMTP server with the configured login", async () => {
    const row = await channel({
      name: "mail",
      kind: "email",
      config: {
        host: smtp.host,
        port: smtp.port,
        security: "none",
        username: "mailer",
        password: CANARY,
        from: "fleetback@example.com",
        to: ["ops@example.com", "oncall@example.com"],
      },
    });
    start().alertOpened(alert, context);
    const [mail] = await smtp.waitFor(1);
    await harness.notifier?.idle();
    expect(mail?.from).toBe("fleetback@example.com");
    expect(mail?.to).toEqual(["ops@example.com", "oncall@example.com"]);
    expect(mail?.username).toBe("mailer");
    expect(mail?.password).toBe(CANARY);
    expect(mail?.raw).toMatch(/^Subject: \[Fleetback\] backup_failed on db-01 \(etc\)$/m);
    expect(mail?.raw).toContain(alert.message);
    expect(mail?.raw).toContain(`${server.deps.config.baseUrl}/hosts/${alert.hostId}`);
    expect(await logRows(row.id)).toMatchObject([{ status: "sent", attempt: 1 }]);
  });

  it("retries a 500 with exponential backoff and logs every attempt", async () => {
    const row = await channel({ name: "flaky", kind: "slack", config: { url: `${receiver.url}/flaky` } });
    receiver.reply(500, 503);
    const timers = clockTimers(server.deps.clock);
    const n = start({ timers: timers.timers, backoffMs: 1_000, backoffFactor: 4 });
    n.alertOpened(alert, context);
    await n.idle();
    expect(receiver.requests).toHaveLength(1);
    const due = new Date(server.deps.clock.now().getTime() + 1_000);
    expect(await queued()).toMatchObject([
      { channelId: row.id, attempts: 1, nextAttemptAt: due, claimedUntil: null },
    ]);
    expect(await settle(n, timers)).toEqual([1_000, 4_000]);
    expect(receiver.requests).toHaveLength(3);
    const rows = await logRows(row.id);
    expect(rows.map((r) => [r.attempt, r.status, r.statusCode])).toEqual([
      [1, "retrying", 500],
      [2, "retrying", 503],
      [3, "sent", 200],
    ]);
    expect(rows[0]?.error).toBe("HTTP 500");
  });

  it("does not retry a 4xx answer", async () => {
    const row = await channel({ name: "gone", kind: "discord", config: { url: `${receiver.url}/gone` } });
    receiver.reply(404);
    start({ timers: clockTimers(server.deps.clock).timers }).alertOpened(alert, context);
    await harness.notifier?.idle();
    expect((await logRows(row.id)).map((r) => [r.attempt, r.status, r.statusCode])).toEqual([
      [1, "failed", 404],
    ]);
    expect(await queued()).toEqual([]);
  });

  it("gives up on a dead endpoint after the last attempt without delaying the caller", async () => {
    const dead = await startHttpReceiver();
    await dead.close();
    const row = await channel({
      name: "dead",
      kind: "webhook",
      config: { url: `${dead.url}/x`, secret: CANARY },
    });
    const live = await channel({ name: "live", kind: "slack", config: { url: `${receiver.url}/live` } });
    const timers = clockTimers(server.deps.clock);
    const n = start({ timers: timers.timers, maxAttempts: 3 });
    // Nothing to await and nothing attempted yet when it returns: the caller never waits on the
    // endpoint. How long the call itself takes is the machine's speed.
    expect(n.alertOpened(alert, context)).toBeUndefined();
    expect(await logRows()).toEqual([]);
    await settle(n, timers);
    const rows = await logRows(row.id);
    expect(rows.map((r) => [r.attempt, r.status])).toEqual([
      [1, "retrying"],
      [2, "retrying"],
      [3, "failed"],
    ]);
    expect(rows[2]?.error).toMatch(/ECONNREFUSED/);
    expect(await logRows(live.id)).toMatchObject([{ status: "sent" }]);
  });

  it("times out a hanging endpoint per attempt; the other channel is not held up", async () => {
    const hangReceiver = await startHttpReceiver();
    hangReceiver.reply("hang");
    const slow = await channel({ name: "slow", kind: "slack", config: { url: `${hangReceiver.url}/slow` } });
    const fast = await channel({ name: "fast", kind: "discord", config: { url: `${receiver.url}/fast` } });
    // The attempt deadline runs on the manual clock: the slow attempt hangs until the test moves it.
    const timers = clockTimers(server.deps.clock);
    const n = start({ timers: timers.timers, attemptTimeoutMs: 1_000, maxAttempts: 1 });
    const fastSent = recorded(fast.id, "sent");
    n.alertOpened(alert, context);
    await hangReceiver.waitFor(1);
    await fastSent;
    expect(await logRows(slow.id)).toEqual([]);
    server.deps.clock.advance(1_000);
    timers.runDue();
    await n.idle();
    expect(await logRows(slow.id)).toMatchObject([{ status: "failed", error: "timed out" }]);
    await hangReceiver.close();
  });

  it("sends resolutions only to channels that ask for them, and skips disabled channels", async () => {
    const wants = await channel({
      name: "wants",
      kind: "webhook",
      notifyResolved: true,
      config: { url: `${receiver.url}/wants`, secret: CANARY },
    });
    await channel({ name: "quiet", kind: "slack", config: { url: `${receiver.url}/quiet` } });
    await channel({ name: "off", kind: "slack", enabled: false, config: { url: `${receiver.url}/off` } });
    start().alertResolved({ ...alert, resolvedAt: new Date("2026-11-21T13:00:00Z") }, context);
    await harness.notifier?.idle();
    expect(receiver.requests.map((req) => req.path)).toEqual(["/wants"]);
    expect(JSON.parse(receiver.requests[0]?.body ?? "{}")).toMatchObject({
      event: "alert.resolved",
      alert: { resolved_at: "2026-11-21T13:00:00.000Z" },
    });
    expect(await logRows(wants.id)).toMatchObject([{ status: "sent", event: "alert.resolved" }]);
    receiver.requests.length = 0;
    harness.notifier?.alertOpened(alert, context);
    await harness.notifier?.idle();
    expect(receiver.requests.map((req) => req.path).sort()).toEqual(["/quiet", "/wants"]);
  });

  it("keeps secrets out of notification_log and the server log, even when the endpoint echoes them", async () => {
    const url = `${receiver.url}/hooks/${CANARY}?token=${CANARY}`;
    const row = await channel({ name: "echo", kind: "slack", config: { url } });
    const echo = { status: 500, body: `no such hook: ${url} (/hooks/${encodeURIComponent(CANARY)})` };
    receiver.reply(echo, echo);
    const timers = clockTimers(server.deps.clock);
    const n = start({ timers: timers.timers, maxAttempts: 2 });
    n.alertOpened(alert, context);
    await settle(n, timers);
    const rows = await logRows(row.id);
    expect(rows.map((r) => r.status)).toEqual(["retrying", "failed"]);
    // The answer's body is never read, so what the endpoint echoes cannot reach the log at all.
    expect(rows.map((r) => r.error)).toEqual(["HTTP 500", "HTTP 500"]);
    expect(JSON.stringify(rows)).not.toContain("no such hook");
    expect(server.deps.logLines.join("\n")).not.toContain("no such hook");
    expect(JSON.stringify(rows)).not.toContain(CANARY);
    expect(JSON.stringify(rows)).not.toContain("SECRET");
    expect(server.deps.logLines.join("\n")).not.toContain(CANARY);
  });

  it("logs a channel whose sealed config does not open as failed, without retrying", async () => {
    const id = ulid();
    await server.deps.db.insert(notificationChannels).values({
      id,
      name: "moved",
      kind: "slack",
      // Sealed for another channel: the AAD does not match this row.
      sealedConfig: sealJson(server.deps.keys.secret, { url: `${receiver.url}/x` }, "channel:other"),
    });
    start().alertOpened(alert, context);
    await harness.notifier?.idle();
    expect(receiver.requests).toEqual([]);
    expect(await logRows(id)).toMatchObject([{ status: "failed", attempt: 1 }]);
  });

  it("sendTest makes one awaited attempt and logs it as a test", async () => {
    const ok = await channel({
      name: "ok",
      kind: "slack",
      enabled: false,
      config: { url: `${receiver.url}/ok` },
    });
    const n = start();
    expect(await n.sendTest(ok.id)).toEqual({ status: "sent", statusCode: 200, error: null });
    expect(JSON.parse(receiver.requests[0]?.body ?? "{}").text).toContain("test notification");
    receiver.reply(500);
    expect(await n.sendTest(ok.id)).toEqual({
      status: "failed",
      statusCode: 500,
      error: "HTTP 500",
    });
    expect((await logRows(ok.id)).map((r) => [r.event, r.status, r.alertId])).toEqual([
      ["test", "sent", null],
      ["test", "failed", null],
    ]);
    await expect(n.sendTest("01JD0000000000000000000000")).rejects.toMatchObject({ code: "not_found" });
  });
});

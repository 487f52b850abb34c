import { createHmac } from "node:crypto";
import { sealJson } from "@fleetback/crypto";
import { type Alert, alerts, notificationChannels, notificationLog } from "@fleetback/db";
import { asc, eq } from "drizzle-orm";
import { ulid } from "ulidx";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { eventually } from "../testing/eventually.js";
import { type HttpReceiver, startHttpReceiver } from "../testing/http-receiver.js";
import { seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { type SmtpReceiver, startSmtpReceiver } from "../testing/smtp-receiver.js";
import type { SetTimer } from "../tickers/set-timer.js";
import { createChannel, deleteChannel, type NewChannelInput, updateChannel } from "./channels.js";
import { createNotifier, type Notifier, type NotifierOptions } from "./notifier.js";

const CANARY = "canary-SECRET-123";

/** Runs every backoff wait at once and remembers how long it was asked to be. */
function fastTimers() {
  const delays: number[] = [];
  const setTimer: SetTimer = (run, ms) => {
    delays.push(ms);
    const handle = setImmediate(run);
    return () => clearImmediate(handle);
  };
  return { delays, setTimer };
}

runServerSuite("notifier", (server) => {
  let receiver: HttpReceiver;
  let smtp: SmtpReceiver;
  let notifier: Notifier | undefined;
  let alert: Alert;
  const context = { hostName: "db-01", sourceGroupName: "etc" };

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    smtp = await startSmtpReceiver({ username: "mailer", password: CANARY });
  });
  afterAll(async () => {
    await receiver.close();
    await smtp.close();
  });
  beforeEach(async () => {
    await notifier?.close();
    notifier = undefined;
    receiver.requests.length = 0;
    smtp.messages.length = 0;
    await server.deps.db.delete(notificationChannels);
    const { host } = await seedHost(server.deps, { name: "db-01" });
    const [row] = await server.deps.db
      .insert(alerts)
      .values({
        id: ulid(),
        hostId: host.id,
        kind: "backup_failed",
        dedupKey: "group-1",
        message: "restic exited with status 1: repository is locked",
        createdAt: new Date("2026-11-21T12:00:00Z"),
      })
      .returning();
    if (!row) {
      throw new Error("no alert row");
    }
    alert = row;
  });

  function start(options: NotifierOptions = {}) {
    notifier = createNotifier(server.deps, { attemptTimeoutMs: 2_000, ...options });
    return notifier;
  }

  async function channel(input: Omit<NewChannelInput, "kind"> & { kind: NewChannelInput["kind"] }) {
    return (await createChannel(server.deps, input)).row;
  }

  async function logRows(channelId?: string) {
    return server.deps.db
      .select()
      .from(notificationLog)
      .where(channelId ? eq(notificationLog.channelId, channelId) : undefined)
      .orderBy(asc(notificationLog.id));
  }

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
    await notifier?.idle();

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
    expect(discord.content).toContain("backup_failed on db-01");
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
    await notifier?.idle();
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
    const timers = fastTimers();
    start({ setTimer: timers.setTimer, backoffMs: 1_000, backoffFactor: 4 }).alertOpened(alert, context);
    await notifier?.idle();
    expect(receiver.requests).toHaveLength(3);
    expect(timers.delays).toEqual([1_000, 4_000]);
    const rows = await logRows(row.id);
    expect(rows.map((r) => [r.attempt, r.status, r.statusCode])).toEqual([
      [1, "retrying", 500],
      [2, "retrying", 503],
      [3, "sent", 200],
    ]);
    expect(rows[0]?.error).toBe("HTTP 500: scripted 500");
  });

  it("does not retry a 4xx answer", async () => {
    const row = await channel({ name: "gone", kind: "discord", config: { url: `${receiver.url}/gone` } });
    receiver.reply(404);
    start({ setTimer: fastTimers().setTimer }).alertOpened(alert, context);
    await notifier?.idle();
    expect((await logRows(row.id)).map((r) => [r.attempt, r.status, r.statusCode])).toEqual([
      [1, "failed", 404],
    ]);
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
    const timers = fastTimers();
    const started = performance.now();
    start({ setTimer: timers.setTimer, maxAttempts: 3 }).alertOpened(alert, context);
    expect(performance.now() - started).toBeLessThan(20);
    expect(await logRows()).toEqual([]);
    await notifier?.idle();
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
    start({ attemptTimeoutMs: 1_000, maxAttempts: 1 }).alertOpened(alert, context);
    await hangReceiver.waitFor(1);
    const started = performance.now();
    await eventuallyRows(fast.id, 1);
    expect(performance.now() - started).toBeLessThan(900);
    expect(await logRows(slow.id)).toEqual([]);
    await notifier?.idle();
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
    await notifier?.idle();
    expect(receiver.requests.map((req) => req.path)).toEqual(["/wants"]);
    expect(JSON.parse(receiver.requests[0]?.body ?? "{}")).toMatchObject({
      event: "alert.resolved",
      alert: { resolved_at: "2026-11-21T13:00:00.000Z" },
    });
    expect(await logRows(wants.id)).toMatchObject([{ status: "sent", event: "alert.resolved" }]);
    receiver.requests.length = 0;
    notifier?.alertOpened(alert, context);
    await notifier?.idle();
    expect(receiver.requests.map((req) => req.path).sort()).toEqual(["/quiet", "/wants"]);
  });

  it("keeps secrets out of notification_log and the server log, even when the endpoint echoes them", async () => {
    const url = `${receiver.url}/hooks/${CANARY}?token=${CANARY}`;
    const row = await channel({ name: "echo", kind: "slack", config: { url } });
    const echo = { status: 500, body: `no such hook: ${url} (/hooks/${encodeURIComponent(CANARY)})` };
    receiver.reply(echo, echo);
    start({ setTimer: fastTimers().setTimer, maxAttempts: 2 }).alertOpened(alert, context);
    await notifier?.idle();
    const rows = await logRows(row.id);
    expect(rows.map((r) => r.status)).toEqual(["retrying", "failed"]);
    expect(rows[0]?.error).toContain("no such hook");
    expect(rows[0]?.error).toContain("***");
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
    await notifier?.idle();
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
      error: "HTTP 500: scripted 500",
    });
    expect((await logRows(ok.id)).map((r) => [r.event, r.status, r.alertId])).toEqual([
      ["test", "sent", null],
      ["test", "failed", null],
    ]);
    await expect(n.sendTest("01JD0000000000000000000000")).rejects.toMatchObject({ code: "not_found" });
  });

  it("a retry follows the channel as it is now: edited, disabled or deleted meanwhile", async () => {
    const pending: Array<() => void> = [];
    const n = start({
      setTimer: (run) => {
        pending.push(run);
        return () => undefined;
      },
    });
    const edited = await channel({ name: "edited", kind: "slack", config: { url: `${receiver.url}/old` } });
    receiver.reply(500);
    n.alertOpened(alert, context);
    await eventually(
      () => pending.length,
      (count) => count === 1,
    );
    await updateChannel(server.deps, edited.id, { config: { url: `${receiver.url}/new` } });
    pending.shift()?.();
    await n.idle();
    expect(receiver.requests.map((req) => req.path)).toEqual(["/old", "/new"]);

    const disabled = await channel({ name: "disabled", kind: "slack", config: { url: `${receiver.url}/d` } });
    const deleted = await channel({ name: "deleted", kind: "slack", config: { url: `${receiver.url}/x` } });
    await updateChannel(server.deps, edited.id, { enabled: false });
    receiver.requests.length = 0;
    receiver.reply(500, 500);
    n.alertOpened(alert, context);
    await eventually(
      () => pending.length,
      (count) => count === 2,
    );
    await updateChannel(server.deps, disabled.id, { enabled: false });
    await deleteChannel(server.deps.db, deleted.id);
    for (const run of pending.splice(0)) {
      run();
    }
    await n.idle();
    expect(receiver.requests).toHaveLength(2);
    expect((await logRows(disabled.id)).map((r) => [r.attempt, r.status, r.error])).toEqual([
      [1, "retrying", "HTTP 500: scripted 500"],
      [2, "failed", "not attempted: the channel was disabled"],
    ]);
    expect(server.deps.logLines.join("\n")).not.toContain("crashed");
  });

  it("close stops waiting retries, aborts hanging attempts after its bound, then drops new alerts", async () => {
    const hangReceiver = await startHttpReceiver();
    hangReceiver.reply("hang");
    const retrying = await channel({ name: "retrying", kind: "slack", config: { url: `${receiver.url}/r` } });
    const hanging = await channel({
      name: "hanging",
      kind: "discord",
      config: { url: `${hangReceiver.url}/h` },
    });
    receiver.reply(500);
    // A timer that never fires: without close the retry would wait forever.
    const n = start({ setTimer: () => () => undefined, closeTimeoutMs: 200, attemptTimeoutMs: 60_000 });
    n.alertOpened(alert, context);
    await receiver.waitFor(1);
    await hangReceiver.waitFor(1);
    await eventuallyRows(retrying.id, 1);
    const started = performance.now();
    await n.close();
    expect(performance.now() - started).toBeLessThan(1_500);
    expect((await logRows(retrying.id)).map((r) => [r.attempt, r.status, r.error])).toEqual([
      [1, "retrying", "HTTP 500: scripted 500"],
      [2, "failed", "not attempted: the server shut down before this retry"],
    ]);
    expect((await logRows(hanging.id)).map((r) => [r.attempt, r.status, r.error])).toEqual([
      [1, "failed", "aborted: the server shut down"],
    ]);
    n.alertOpened(alert, context);
    await n.idle();
    expect(receiver.requests).toHaveLength(1);
    await hangReceiver.close();
  });

  async function eventuallyRows(channelId: string, count: number) {
    const deadline = Date.now() + 5_000;
    while ((await logRows(channelId)).length < count) {
      if (Date.now() > deadline) {
        throw new Error("log rows did not appear");
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
});

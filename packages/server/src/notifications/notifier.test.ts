import { createHmac } from "node:crypto";
import { sealJson } from "@fleetback/crypto";
import {
  type Alert,
  alerts,
  notificationChannels,
  notificationDeliveries,
  notificationLog,
} from "@fleetback/db";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { asc, eq } from "drizzle-orm";
import { ulid } from "ulidx";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { createLogger } from "../log.js";
import { type HttpReceiver, startHttpReceiver } from "../testing/http-receiver.js";
import { seedAuditContext, seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { type SmtpReceiver, startSmtpReceiver } from "../testing/smtp-receiver.js";
import type { TestDeps } from "../testing/test-deps.js";
import { createChannel, deleteChannel, type NewChannelInput, updateChannel } from "./channels.js";
import { createNotifier, NOTIFIER_DEFAULTS, type NotifierOptions } from "./notifier.js";
import type { Notifier } from "./notifier-port.js";

const CANARY = "canary-SECRET-123";

/**
 * Timers on the suite's manual clock, so that a wait is both measured and skipped: `next()` moves
 * the clock to the earliest timer, runs every timer due by then and says how far it moved.
 */
function clockTimers(clock: TestDeps["clock"]) {
  const timers = createManualTimers(clock);
  const earliest = () => {
    const [delay] = timers.pendingDelays();
    if (delay === undefined) {
      throw new Error("no timer is set");
    }
    return Math.max(0, delay);
  };
  return {
    timers,
    pending: () => timers.pending(),
    nextAt: () => clock.now().getTime() + (timers.pendingDelays()[0] ?? Number.POSITIVE_INFINITY),
    runDue: () => timers.advance(0),
    next(): number {
      const moved = earliest();
      timers.advance(moved);
      return moved;
    },
  };
}

runServerSuite("notifier", (server) => {
  let receiver: HttpReceiver;
  let smtp: SmtpReceiver;
  let notifier: Notifier | undefined;
  /** Every notifier a test started; several stand for servers sharing the database. */
  const started: Notifier[] = [];
  let alert: Alert;
  const context = { hostName: "db-01", sourceGroupName: "etc" };

  beforeAll(async () => {
    // The test server's own notifier would claim the deliveries of the notifiers under test.
    await server.deps.notifier.close();
    receiver = await startHttpReceiver();
    smtp = await startSmtpReceiver({ username: "mailer", password: CANARY });
  });
  afterAll(async () => {
    await Promise.all(started.splice(0).map((n) => n.close()));
    await receiver.close();
    await smtp.close();
  });
  beforeEach(async () => {
    await Promise.all(started.splice(0).map((n) => n.close()));
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

  /** Waiting on an attempt's record: resolved by the log line written right after its row. */
  const logWatchers = new Set<(line: string) => void>();
  const log = createLogger("debug", {
    write(line: string) {
      server.deps.logLines.push(line);
      for (const watch of logWatchers) {
        watch(line);
      }
    },
  });

  function recorded(channelId: string, status: string): Promise<void> {
    return new Promise((resolve) => {
      const watch = (line: string) => {
        const fields = JSON.parse(line) as { channel_id?: string; status?: string };
        if (fields.channel_id === channelId && fields.status === status) {
          logWatchers.delete(watch);
          resolve();
        }
      };
      logWatchers.add(watch);
    });
  }

  function start(options: NotifierOptions = {}) {
    // A deadline on the real clock is no assertion: a loaded machine once took over 2 s to load
    // nodemailer and send the first mail. Tests of the deadline itself pass manual timers.
    const created = createNotifier({ ...server.deps, log }, { attemptTimeoutMs: 30_000, ...options });
    started.push(created);
    notifier = created;
    return created;
  }

  async function openAlert(dedupKey: string) {
    const [row] = await server.deps.db
      .insert(alerts)
      .values({ ...alert, id: ulid(), dedupKey, createdAt: server.deps.clock.now() })
      .returning();
    if (!row) {
      throw new Error("no alert row");
    }
    return row;
  }

  function queued() {
    return server.deps.db.select().from(notificationDeliveries).orderBy(asc(notificationDeliveries.id));
  }

  /** Lets the retries happen on the clock until nothing is queued; answers the waits it skipped. */
  async function settle(n: Notifier, timers: ReturnType<typeof clockTimers>) {
    const waits: number[] = [];
    for (let round = 0; round < 20; round++) {
      await n.idle();
      if ((await queued()).length === 0) {
        return waits;
      }
      waits.push(timers.next());
    }
    throw new Error(`deliveries still queued after ${waits.length} waits: ${waits.join(", ")}`);
  }

  async function channel(input: Omit<NewChannelInput, "kind"> & { kind: NewChannelInput["kind"] }) {
    return (await createChannel(server.deps, await seedAuditContext(server.deps), input)).row;
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
    await notifier?.idle();
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
      error: "HTTP 500",
    });
    expect((await logRows(ok.id)).map((r) => [r.event, r.status, r.alertId])).toEqual([
      ["test", "sent", null],
      ["test", "failed", null],
    ]);
    await expect(n.sendTest("01JD0000000000000000000000")).rejects.toMatchObject({ code: "not_found" });
  });

  it("a retry follows the channel as it is now: edited, disabled or deleted meanwhile", async () => {
    const timers = clockTimers(server.deps.clock);
    const n = start({ timers: timers.timers });
    const edited = await channel({ name: "edited", kind: "slack", config: { url: `${receiver.url}/old` } });
    const audit = await seedAuditContext(server.deps);
    receiver.reply(500);
    n.alertOpened(alert, context);
    await n.idle();
    await updateChannel(server.deps, audit, edited.id, { config: { url: `${receiver.url}/new` } });
    await settle(n, timers);
    expect(receiver.requests.map((req) => req.path)).toEqual(["/old", "/new"]);

    const disabled = await channel({ name: "disabled", kind: "slack", config: { url: `${receiver.url}/d` } });
    const deleted = await channel({ name: "deleted", kind: "slack", config: { url: `${receiver.url}/x` } });
    await updateChannel(server.deps, audit, edited.id, { enabled: false });
    receiver.requests.length = 0;
    receiver.reply(500, 500);
    n.alertOpened(alert, context);
    await n.idle();
    expect(await queued()).toHaveLength(2);
    await updateChannel(server.deps, audit, disabled.id, { enabled: false });
    await deleteChannel(server.deps, audit, deleted.id);
    await settle(n, timers);
    expect(receiver.requests).toHaveLength(2);
    expect((await logRows(disabled.id)).map((r) => [r.attempt, r.status, r.error])).toEqual([
      [1, "retrying", "HTTP 500"],
      [2, "failed", "not attempted: the channel was disabled"],
    ]);
    expect(server.deps.logLines.join("\n")).not.toContain("crashed");
  });

  it("close leaves waiting retries queued, aborts hanging attempts after its bound, queues later alerts", async () => {
    const hangReceiver = await startHttpReceiver();
    hangReceiver.reply("hang");
    const retrying = await channel({ name: "retrying", kind: "slack", config: { url: `${receiver.url}/r` } });
    const hanging = await channel({
      name: "hanging",
      kind: "discord",
      config: { url: `${hangReceiver.url}/h` },
    });
    receiver.reply(500);
    const timers = clockTimers(server.deps.clock);
    const n = start({ timers: timers.timers, closeTimeoutMs: 200, attemptTimeoutMs: 60_000 });
    const retryLogged = recorded(retrying.id, "retrying");
    n.alertOpened(alert, context);
    await hangReceiver.waitFor(1);
    await retryLogged;
    // The hanging attempt's own deadline is on the manual clock and never falls: close ends only
    // because its bound aborted the attempt. How soon after the bound is the machine's speed.
    await n.close();
    expect(timers.pending()).toBe(0);
    expect((await logRows(retrying.id)).map((r) => [r.attempt, r.status, r.error])).toEqual([
      [1, "retrying", "HTTP 500"],
    ]);
    expect((await logRows(hanging.id)).map((r) => [r.attempt, r.status, r.error])).toEqual([
      [1, "retrying", "aborted: the server shut down"],
    ]);
    // A job ending during shutdown: its alert waits in the queue for the next start.
    n.alertOpened(alert, context);
    await n.idle();
    expect(receiver.requests).toHaveLength(1);
    expect(hangReceiver.requests).toHaveLength(1);
    const rows = await queued();
    expect(rows.map((row) => [row.channelId, row.attempts, row.claimedUntil]).sort()).toEqual(
      [
        [retrying.id, 1, null],
        [retrying.id, 0, null],
        [hanging.id, 1, null],
        [hanging.id, 0, null],
      ].sort(),
    );
    await hangReceiver.close();
  });

  it("a retry pending at shutdown is made once by the next start, when its backoff is due", async () => {
    const secret = `hmac-${CANARY}`;
    const row = await channel({
      name: "restart",
      kind: "webhook",
      config: { url: `${receiver.url}/restart`, secret },
    });
    receiver.reply(503);
    const first = start({ timers: clockTimers(server.deps.clock).timers });
    first.alertOpened(alert, context);
    await first.idle();
    await first.close();
    expect(receiver.requests).toHaveLength(1);
    expect(await queued()).toMatchObject([{ channelId: row.id, attempts: 1, claimedUntil: null }]);

    // The next process: nothing in memory, only the database.
    const timers = clockTimers(server.deps.clock);
    const second = start({ timers: timers.timers });
    await second.idle();
    expect(receiver.requests).toHaveLength(1);
    // Its first pass at start finds the retry waiting and wakes up when the backoff is over.
    expect(await settle(second, timers)).toEqual([0, NOTIFIER_DEFAULTS.backoffMs]);
    expect(receiver.requests).toHaveLength(2);
    const [failed, sent] = receiver.requests;
    expect(sent?.body).toBe(failed?.body);
    expect(JSON.parse(sent?.body ?? "{}")).toMatchObject({ event: "alert.opened", alert: { id: alert.id } });
    expect(sent?.headers["x-fleetback-signature"]).toBe(
      `sha256=${createHmac("sha256", secret)
        .update(sent?.body ?? "")
        .digest("hex")}`,
    );
    expect((await logRows(row.id)).map((r) => [r.attempt, r.status, r.statusCode])).toEqual([
      [1, "retrying", 503],
      [2, "sent", 200],
    ]);
    server.deps.clock.advance(3_600_000);
    timers.runDue();
    await second.idle();
    expect(receiver.requests).toHaveLength(2);
  });

  it("two notifiers on one database (two servers) make every attempt exactly once", async () => {
    const paths = ["/one", "/two", "/three"];
    const channels = [];
    for (const path of paths) {
      channels.push(
        await channel({
          name: `shared${path}`,
          kind: "webhook",
          config: { url: `${receiver.url}${path}`, secret: CANARY },
        }),
      );
    }
    const raised = [
      alert,
      await openAlert("group-2"),
      await openAlert("group-3"),
      await openAlert("group-4"),
    ];
    receiver.reply(500, 500, 500);
    const timers = [clockTimers(server.deps.clock), clockTimers(server.deps.clock)];
    const servers = timers.map((t) => start({ timers: t.timers, concurrency: 2 }));
    raised.forEach((raisedAlert, i) => {
      servers[i % 2]?.alertOpened(raisedAlert, context);
    });
    for (let round = 0; ; round++) {
      expect(round).toBeLessThan(20);
      await Promise.all(servers.map((n) => n.idle()));
      if ((await queued()).length === 0) {
        break;
      }
      // Both servers wake at the same moment and race for the same due rows.
      server.deps.clock.set(new Date(Math.min(...timers.map((t) => t.nextAt()))));
      for (const t of timers) {
        t.runDue();
      }
    }

    const delivered = receiver.requests.slice(3).map((req) => {
      const body = JSON.parse(req.body) as { alert: { id: string } };
      return `${req.path} ${body.alert.id}`;
    });
    const expected = paths.flatMap((path) => raised.map((a) => `${path} ${a.id}`));
    expect(delivered.sort()).toEqual(expected.sort());
    const log = await logRows();
    for (const c of channels) {
      for (const a of raised) {
        const attempts = log
          .filter((entry) => entry.channelId === c.id && entry.alertId === a.id)
          .sort((x, y) => x.attempt - y.attempt)
          .map((entry) => `${entry.attempt}:${entry.status}`)
          .join(" ");
        expect(["1:sent", "1:retrying 2:sent"]).toContain(attempts);
      }
    }
    expect(log.filter((entry) => entry.status === "retrying")).toHaveLength(3);
  });

  it("an alert raised while no notifier runs its passes is sent at the next pass", async () => {
    const row = await channel({ name: "later", kind: "slack", config: { url: `${receiver.url}/later` } });
    const stopped = start();
    await stopped.close();
    stopped.alertOpened(alert, context);
    await stopped.idle();
    expect(receiver.requests).toEqual([]);
    expect(await queued()).toMatchObject([{ channelId: row.id, attempts: 0, claimedUntil: null }]);

    const timers = clockTimers(server.deps.clock);
    const next = start({ timers: timers.timers });
    expect(timers.pending()).toBe(1);
    expect(timers.next()).toBe(0);
    await receiver.waitFor(1);
    await next.idle();
    expect(receiver.requests.map((req) => req.path)).toEqual(["/later"]);
    expect((await logRows(row.id)).map((r) => [r.attempt, r.status])).toEqual([[1, "sent"]]);
    expect(await queued()).toEqual([]);
  });
});

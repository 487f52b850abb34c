/**
 * @module notifications/notifier-queue.test
 * The notifier's queue of deliveries, which lives in the database: a retry follows its channel as
 * it is when the retry is due, survives a shutdown and a restart, is made once by one of several
 * servers, and an alert raised while no notifier runs is sent by the next one.
 */
import { createHmac } from "node:crypto";
import type { Alert } from "@fleetback/db";
import { beforeEach, expect, it } from "vitest";
import { type HttpReceiver, startHttpReceiver } from "../testing/http-receiver.js";
import { CANARY, clockTimers, useNotifierHarness } from "../testing/notifier-harness.js";
import { seedAuditContext } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { deleteChannel, updateChannel } from "./channels.js";
import { NOTIFIER_DEFAULTS } from "./notifier.js";

runServerSuite("notifier queue", (server) => {
  const harness = useNotifierHarness(server);
  const { context, channel, start, logRows, queued, settle, recorded, openAlert } = harness;
  let receiver: HttpReceiver;
  let alert: Alert;
  beforeEach(() => {
    ({ receiver, alert } = harness);
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

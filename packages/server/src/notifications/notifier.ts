/**
 * @module notifications/notifier
 * The Notifier (its port is notifier-port.ts): the alerts module says "this alert opened /
 * resolved" and returns at once. The notification is queued in notification_deliveries, one row
 * per wanted channel, and sent in the background (delivery-worker.ts), so a slow or dead
 * endpoint never delays job handling. Each delivery is retried with exponential backoff (4xx
 * answers are not retried), each attempt has its own timeout, and each lands in notification_log
 * with an error text scrubbed of the channel's secrets.
 *
 * The queue outlives the process: a retry still waiting at shutdown, or left by a crash, is made
 * after the next start, and servers sharing one database claim rows (delivery-queue.ts) so that
 * each attempt is made once. A crash between sending and recording sends once more when its
 * claim runs out: delivery is at least once, never silently dropped.
 */
import { systemTimers, type Timers } from "@fleetback/protocol";
import type { ServerDeps } from "../deps.js";
import { notFound } from "../errors.js";
import { createMonotonicUlids } from "../ids.js";
import { findChannel, listChannels, type StoredChannel } from "./channels.js";
import { type DeliveryPorts, realDeliveryPorts } from "./deliver.js";
import { createDeliveryAttempts } from "./delivery-attempt.js";
import { enqueueDeliveries } from "./delivery-queue.js";
import { createDeliveryWorker } from "./delivery-worker.js";
import { type AlertContext, alertNotification, type NotifiableAlert, testNotification } from "./message.js";
import type { Notifier, TestOutcome } from "./notifier-port.js";

export type NotifierDeps = Pick<ServerDeps, "db" | "keys" | "log" | "clock" | "config">;

export interface NotifierOptions {
  ports?: Partial<DeliveryPorts>;
  /** Retry, pass and per-attempt deadlines; the close bound stays real, so close always ends. */
  timers?: Timers;
  /** Attempts per delivery, the first included. */
  maxAttempts?: number;
  /** Wait before attempt n+1 is backoffMs * factor^(n-1). */
  backoffMs?: number;
  backoffFactor?: number;
  attemptTimeoutMs?: number;
  closeTimeoutMs?: number;
  /**
   * How long a claimed delivery stays this server's. At least attemptTimeoutMs + 30 s is used, so
   * only the claim of a server that died mid-attempt runs out.
   */
  claimLeaseMs?: number;
  /** Longest wait between two passes over the queue: how soon another server's leftovers are seen. */
  passIntervalMs?: number;
  /** Attempts in flight at once; a backlog after an outage is worked through this many at a time. */
  concurrency?: number;
}

type Tuning = Required<Omit<NotifierOptions, "ports" | "timers">>;

/** Attempts after 5 s, 20 s and 80 s: a flapping endpoint gets nearly two minutes to come back. */
export const NOTIFIER_DEFAULTS: Readonly<Tuning> = {
  maxAttempts: 4,
  backoffMs: 5_000,
  backoffFactor: 4,
  attemptTimeoutMs: 10_000,
  closeTimeoutMs: 10_000,
  claimLeaseMs: 60_000,
  passIntervalMs: 15_000,
  concurrency: 8,
};

const LEASE_MARGIN_MS = 30_000;

export function createNotifier(deps: NotifierDeps, options: NotifierOptions = {}): Notifier {
  const settings = { ...NOTIFIER_DEFAULTS, ...withoutUndefined(options) };
  const nextId = createMonotonicUlids();
  const inFlight = new Set<Promise<unknown>>();
  const shutdown = new AbortController();
  let closing: Promise<void> | undefined;

  function track<T>(work: Promise<T>): Promise<T> {
    inFlight.add(work);
    void work
      .catch(() => undefined)
      .finally(() => {
        inFlight.delete(work);
      });
    return work;
  }

  const timers = options.timers ?? systemTimers;
  const attempts = createDeliveryAttempts(deps, {
    ports: { ...realDeliveryPorts, ...options.ports },
    attemptTimeoutMs: settings.attemptTimeoutMs,
    shutdown: shutdown.signal,
    timers,
  });
  const worker = createDeliveryWorker(deps, {
    attempts,
    timers,
    tuning: {
      ...settings,
      claimLeaseMs: Math.max(settings.claimLeaseMs, settings.attemptTimeoutMs + LEASE_MARGIN_MS),
    },
    track,
  });

  function enqueue(
    event: "alert.opened" | "alert.resolved",
    alert: NotifiableAlert,
    context: AlertContext,
    wants: (channel: StoredChannel) => boolean,
  ): void {
    const at = deps.clock.now();
    const { title, body, link, data } = alertNotification(event, alert, context, deps.config.baseUrl, at);
    const work = (async () => {
      const channels = (await listChannels(deps, { enabledOnly: true })).filter(wants);
      await enqueueDeliveries(
        deps.db,
        channels.map((channel) => ({
          id: nextId(at),
          channelId: channel.row.id,
          alertId: alert.id,
          event,
          notification: { title, body, link, data },
          at,
        })),
      );
      if (closing) {
        deps.log.info(
          { event, alert_id: alert.id },
          "notifier closed; notification queued for the next start",
        );
      }
      worker.pump();
    })().catch((err: unknown) => {
      deps.log.error({ err, event, alert_id: alert.id }, "notification could not be queued");
    });
    track(work);
  }

  async function drain(): Promise<void> {
    while (inFlight.size > 0) {
      await Promise.allSettled([...inFlight]);
    }
  }

  return {
    alertOpened(alert, context) {
      enqueue("alert.opened", alert, context, () => true);
    },
    alertResolved(alert, context) {
      enqueue("alert.resolved", alert, context, (channel) => channel.row.notifyResolved);
    },
    async sendTest(channelId) {
      const channel = await findChannel(deps.db, deps.keys.secret, channelId);
      if (!channel) {
        throw notFound(`No notification channel ${channelId}.`);
      }
      const n = testNotification(channel.row.name, deps.config.baseUrl, deps.clock.now());
      const run = (async (): Promise<TestOutcome> => {
        const result = await attempts.attempt(channel, n);
        await attempts.record(channel, n, 1, result.ok ? "sent" : "failed", result);
        return {
          status: result.ok ? "sent" : "failed",
          statusCode: result.statusCode ?? null,
          error: result.ok ? null : result.error,
        };
      })();
      return track(run);
    },
    async idle() {
      for (;;) {
        await drain();
        if (closing || !(await worker.hasDue())) {
          if (inFlight.size === 0) {
            return;
          }
        } else {
          worker.pump();
        }
      }
    },
    close() {
      closing ??= (async () => {
        worker.stop();
        const drained = drain();
        let cancelTimer: (() => void) | undefined;
        const timedOut = new Promise<void>((resolve) => {
          cancelTimer = systemTimers.after(settings.closeTimeoutMs, resolve);
        });
        await Promise.race([drained, timedOut]);
        cancelTimer?.();
        if (inFlight.size > 0) {
          shutdown.abort(new Error("notifier closed"));
          await drained;
        }
      })();
      return closing;
    },
  };
}

function withoutUndefined(options: NotifierOptions): Partial<Tuning> {
  const picked: Partial<Tuning> = {};
  for (const key of Object.keys(NOTIFIER_DEFAULTS) as Array<keyof Tuning>) {
    const value = options[key];
    if (value !== undefined) {
      picked[key] = value;
    }
  }
  return picked;
}

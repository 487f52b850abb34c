/**
 * @module notifications/notifier
 * The Notifier port: the alerts module says "this alert opened / resolved" and returns at once;
 * fan-out to every enabled channel runs in the background, so a slow or dead endpoint never
 * delays job handling. Each delivery is retried with exponential backoff (4xx answers are not
 * retried), each attempt has its own timeout, and each lands in notification_log with an error
 * text scrubbed of the channel's secrets. Retries live in memory: a restart drops pending ones.
 */
import { createScrubber } from "@fleetback/crypto";
import { monotonicFactory } from "ulidx";
import type { ServerDeps } from "../deps.js";
import { notFound } from "../errors.js";
import { realSetTimer, type SetTimer } from "../tickers/set-timer.js";
import { channelTarget, secretValues } from "./channel-config.js";
import { findChannel, listChannels, type StoredChannel } from "./channels.js";
import { type AttemptResult, attemptDelivery, type DeliveryPorts, realDeliveryPorts } from "./deliver.js";
import {
  type AlertContext,
  alertNotification,
  type NotifiableAlert,
  type Notification,
  testNotification,
} from "./message.js";
import { recordAttempt } from "./notification-log.js";

export type { AlertContext, NotifiableAlert } from "./message.js";

export interface TestOutcome {
  status: "sent" | "failed";
  statusCode: number | null;
  /** Scrubbed of the channel's secrets. */
  error: string | null;
}

export interface Notifier {
  /** A new alert: every enabled channel is notified in the background. Never throws or waits. */
  alertOpened(alert: NotifiableAlert, context: AlertContext): void;
  /** A resolved alert: enabled channels with notify_resolved, in the background. */
  alertResolved(alert: NotifiableAlert, context: AlertContext): void;
  /** One attempt to one channel (enabled or not), awaited, logged as event `test`. */
  sendTest(channelId: string): Promise<TestOutcome>;
  /** Resolves when no delivery is in flight or waiting to retry (tests, shutdown). */
  idle(): Promise<void>;
  /** Stops retrying, waits for attempts in flight (bounded), then aborts what is left. */
  close(): Promise<void>;
}

export type NotifierDeps = Pick<ServerDeps, "db" | "keys" | "log" | "clock" | "config">;

export interface NotifierOptions {
  ports?: Partial<DeliveryPorts>;
  setTimer?: SetTimer;
  /** Attempts per delivery, the first included. */
  maxAttempts?: number;
  /** Wait before attempt n+1 is backoffMs * factor^(n-1). */
  backoffMs?: number;
  backoffFactor?: number;
  attemptTimeoutMs?: number;
  closeTimeoutMs?: number;
}

type Tuning = Required<Omit<NotifierOptions, "ports" | "setTimer">>;

/** Attempts after 5 s, 20 s and 80 s: a flapping endpoint gets nearly two minutes to come back. */
export const NOTIFIER_DEFAULTS: Readonly<Tuning> = {
  maxAttempts: 4,
  backoffMs: 5_000,
  backoffFactor: 4,
  attemptTimeoutMs: 10_000,
  closeTimeoutMs: 10_000,
};

export function createNotifier(deps: NotifierDeps, options: NotifierOptions = {}): Notifier {
  const ports: DeliveryPorts = { ...realDeliveryPorts, ...options.ports };
  const setTimer = options.setTimer ?? realSetTimer;
  const settings = { ...NOTIFIER_DEFAULTS, ...withoutUndefined(options) };
  const nextId = monotonicFactory();
  const inFlight = new Set<Promise<unknown>>();
  const wakeSleepers = new Set<() => void>();
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

  /** Resolves true after `ms`, or false at once when the notifier is closing. */
  function backoff(ms: number): Promise<boolean> {
    if (closing) {
      return Promise.resolve(false);
    }
    return new Promise((resolve) => {
      let cancel = () => {};
      const wake = () => {
        cancel();
        wakeSleepers.delete(wake);
        resolve(false);
      };
      wakeSleepers.add(wake);
      cancel = setTimer(() => {
        wakeSleepers.delete(wake);
        resolve(true);
      }, ms);
    });
  }

  async function attempt(channel: StoredChannel, n: Notification): Promise<AttemptResult> {
    if (!channel.settings) {
      return { ok: false, retryable: false, error: channel.problem ?? "stored config cannot be opened" };
    }
    const signal = AbortSignal.any([shutdown.signal, AbortSignal.timeout(settings.attemptTimeoutMs)]);
    const result = await attemptDelivery(channel.settings, n, ports, signal, settings.attemptTimeoutMs);
    if (result.ok) {
      return result;
    }
    const scrub = createScrubber(secretValues(channel.settings));
    const error = signal.aborted && shutdown.signal.aborted ? "aborted: the server shut down" : result.error;
    return { ...result, error: scrub(error) };
  }

  async function record(
    channel: StoredChannel,
    n: Notification,
    attemptNo: number,
    status: "sent" | "failed" | "retrying",
    result: AttemptResult,
  ) {
    const at = deps.clock.now();
    const written = await recordAttempt(deps.db, {
      id: nextId(at.getTime()),
      at,
      channelId: channel.row.id,
      alertId: n.alertId,
      event: n.event,
      attempt: attemptNo,
      status,
      statusCode: result.statusCode,
      error: result.ok ? undefined : result.error,
    });
    const fields = {
      channel_id: channel.row.id,
      channel_kind: channel.row.kind,
      target: channel.settings ? channelTarget(channel.settings) : undefined,
      alert_id: n.alertId,
      event: n.event,
      attempt: attemptNo,
      status,
      status_code: result.statusCode,
      error: result.ok ? undefined : result.error,
    };
    if (status === "sent") {
      deps.log.info(fields, "notification sent");
    } else {
      deps.log.warn(
        fields,
        status === "retrying" ? "notification attempt failed; retrying" : "notification failed",
      );
    }
    return written;
  }

  async function deliver(first: StoredChannel, n: Notification): Promise<void> {
    let channel = first;
    for (let attemptNo = 1; ; attemptNo++) {
      const result = await attempt(channel, n);
      const last =
        result.ok || !result.retryable || attemptNo >= settings.maxAttempts || closing !== undefined;
      const status = result.ok ? "sent" : last ? "failed" : "retrying";
      if ((await record(channel, n, attemptNo, status, result)) === "channel_gone" || last) {
        return;
      }
      const waited = await backoff(settings.backoffMs * settings.backoffFactor ** (attemptNo - 1));
      if (!waited) {
        const gaveUp: AttemptResult = {
          ok: false,
          retryable: false,
          error: "not attempted: the server shut down before this retry",
        };
        await record(channel, n, attemptNo + 1, "failed", gaveUp);
        return;
      }
      // Deleted, disabled or edited while waiting: the retry follows what the channel is now.
      const current = await findChannel(deps.db, deps.keys.secret, channel.row.id);
      if (!current) {
        return;
      }
      if (!current.row.enabled) {
        const disabled: AttemptResult = {
          ok: false,
          retryable: false,
          error: "not attempted: the channel was disabled",
        };
        await record(current, n, attemptNo + 1, "failed", disabled);
        return;
      }
      channel = current;
    }
  }

  function fanOut(n: Notification, wants: (channel: StoredChannel) => boolean): void {
    if (closing) {
      deps.log.warn({ event: n.event, alert_id: n.alertId }, "notifier closed; notification dropped");
      return;
    }
    const work = (async () => {
      const channels = await listChannels(deps, { enabledOnly: true });
      for (const channel of channels.filter(wants)) {
        track(
          deliver(channel, n).catch((err: unknown) => {
            deps.log.error(
              { err, channel_id: channel.row.id, event: n.event },
              "notification delivery crashed",
            );
          }),
        );
      }
    })().catch((err: unknown) => {
      deps.log.error({ err, event: n.event, alert_id: n.alertId }, "notification fan-out failed");
    });
    track(work);
  }

  async function idle(): Promise<void> {
    while (inFlight.size > 0) {
      await Promise.allSettled([...inFlight]);
    }
  }

  return {
    alertOpened(alert, context) {
      fanOut(
        alertNotification("alert.opened", alert, context, deps.config.baseUrl, deps.clock.now()),
        () => true,
      );
    },
    alertResolved(alert, context) {
      fanOut(
        alertNotification("alert.resolved", alert, context, deps.config.baseUrl, deps.clock.now()),
        (channel) => channel.row.notifyResolved,
      );
    },
    async sendTest(channelId) {
      const channel = await findChannel(deps.db, deps.keys.secret, channelId);
      if (!channel) {
        throw notFound(`No notification channel ${channelId}.`);
      }
      const n = testNotification(channel.row.name, deps.config.baseUrl, deps.clock.now());
      const run = (async (): Promise<TestOutcome> => {
        const result = await attempt(channel, n);
        await record(channel, n, 1, result.ok ? "sent" : "failed", result);
        return {
          status: result.ok ? "sent" : "failed",
          statusCode: result.statusCode ?? null,
          error: result.ok ? null : result.error,
        };
      })();
      return track(run);
    },
    idle,
    close() {
      closing ??= (async () => {
        for (const wake of [...wakeSleepers]) {
          wake();
        }
        const drained = idle();
        let cancelTimer: (() => void) | undefined;
        const timedOut = new Promise<void>((resolve) => {
          cancelTimer = realSetTimer(resolve, settings.closeTimeoutMs);
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

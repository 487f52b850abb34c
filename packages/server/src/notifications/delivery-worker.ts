/**
 * @module notifications/delivery-worker
 * Works through notification_deliveries: a pass claims the due rows (as many as attempts may run
 * at once) and starts one attempt each; after an attempt the row is dropped (sent, refused or out
 * of attempts) or released for its next attempt after the backoff. One timer, armed for the next
 * row to become claimable but never further away than `passIntervalMs`, starts the next pass, so
 * retries run on time and rows another server left behind are seen too. The first pass runs at
 * creation: that is how a restart resumes the retries of the previous process.
 */
import type { Timers } from "@fleetback/protocol";
import type { ServerDeps } from "../deps.js";
import { findChannel } from "./channels.js";
import type { AttemptResult } from "./deliver.js";
import type { DeliveryAttempts } from "./delivery-attempt.js";
import {
  type ClaimedDelivery,
  claimDueDeliveries,
  finishDelivery,
  hasDueDelivery,
  nextClaimableAt,
  rescheduleDelivery,
} from "./delivery-queue.js";
import type { Notification } from "./message.js";

export interface WorkerTuning {
  maxAttempts: number;
  backoffMs: number;
  backoffFactor: number;
  claimLeaseMs: number;
  passIntervalMs: number;
  concurrency: number;
}

export interface DeliveryWorker {
  /** Starts a pass now, or right after the one running; nothing once stopped. */
  pump(): void;
  /** Whether some queued delivery could be claimed now. */
  hasDue(): Promise<boolean>;
  /** No more passes; attempts already started run to their end (the caller waits for them). */
  stop(): void;
}

/** A due row a pass could not claim is being claimed by another server at this very moment. */
const RECHECK_MS = 1_000;

export function createDeliveryWorker(
  deps: Pick<ServerDeps, "db" | "keys" | "log" | "clock">,
  options: {
    attempts: DeliveryAttempts;
    timers: Timers;
    tuning: WorkerTuning;
    /** Registers work the notifier's idle() and close() wait for. */
    track: (work: Promise<unknown>) => void;
  },
): DeliveryWorker {
  const { attempts, timers, tuning, track } = options;
  let attempting = 0;
  let passing = false;
  let passAgain = false;
  let stopped = false;
  let cancelPass: (() => void) | undefined;

  async function deliver(row: ClaimedDelivery): Promise<void> {
    const n: Notification = { ...row.notification, event: row.event, alertId: row.alertId };
    const attemptNo = row.attempts + 1;
    // Deleted, disabled or edited while the delivery waited: it follows what the channel is now.
    const channel = await findChannel(deps.db, deps.keys.secret, row.channelId);
    if (!channel) {
      await finishDelivery(deps.db, row);
      return;
    }
    if (!channel.row.enabled) {
      await finishDelivery(deps.db, row);
      const disabled: AttemptResult = {
        ok: false,
        retryable: false,
        error: "not attempted: the channel was disabled",
      };
      await attempts.record(channel, n, attemptNo, "failed", disabled);
      return;
    }
    const result = await attempts.attempt(channel, n);
    const last = result.ok || !result.retryable || attemptNo >= tuning.maxAttempts;
    const waitMs = tuning.backoffMs * tuning.backoffFactor ** (attemptNo - 1);
    const stillOurs = last
      ? await finishDelivery(deps.db, row)
      : await rescheduleDelivery(deps.db, row, new Date(deps.clock.now().getTime() + waitMs));
    const status = result.ok ? "sent" : last ? "failed" : "retrying";
    // A deleted channel takes its queued row along, and its log row cannot be written either.
    if ((await attempts.record(channel, n, attemptNo, status, result)) === "written" && !stillOurs) {
      deps.log.warn(
        { channel_id: row.channelId, alert_id: row.alertId, event: row.event, attempt: attemptNo },
        "notification claim ran out during the attempt; another server may repeat it",
      );
    }
  }

  function startAttempt(row: ClaimedDelivery): void {
    attempting += 1;
    track(
      (async () => {
        try {
          await deliver(row);
        } catch (err) {
          deps.log.error(
            { err, channel_id: row.channelId, event: row.event },
            "notification delivery crashed; retried once its claim runs out",
          );
        } finally {
          attempting -= 1;
          pump();
        }
      })(),
    );
  }

  function schedulePass(ms: number): void {
    cancelPass?.();
    cancelPass = timers.after(ms, () => {
      cancelPass = undefined;
      pump();
    });
  }

  async function armNextPass(): Promise<void> {
    const next = await nextClaimableAt(deps.db);
    if (stopped) {
      return;
    }
    const wait = next ? next.getTime() - deps.clock.now().getTime() : tuning.passIntervalMs;
    schedulePass(Math.min(tuning.passIntervalMs, wait > 0 ? wait : RECHECK_MS));
  }

  async function runPasses(): Promise<void> {
    for (;;) {
      passAgain = false;
      const room = tuning.concurrency - attempting;
      if (room > 0) {
        const now = deps.clock.now();
        const leaseUntil = new Date(now.getTime() + tuning.claimLeaseMs);
        const claimed = await claimDueDeliveries(deps.db, { now, leaseUntil, limit: room });
        for (const row of claimed) {
          startAttempt(row);
        }
        passAgain ||= claimed.length === room;
      }
      // At capacity, each attempt that ends starts the next pass itself.
      if (!stopped && !passAgain && attempting < tuning.concurrency) {
        await armNextPass();
      }
      if (!passAgain || stopped) {
        return;
      }
    }
  }

  function pump(): void {
    if (stopped) {
      return;
    }
    if (passing) {
      passAgain = true;
      return;
    }
    passing = true;
    track(
      runPasses()
        .catch((err: unknown) => {
          deps.log.error({ err }, "notification delivery pass failed");
          if (!stopped) {
            schedulePass(tuning.passIntervalMs);
          }
        })
        .finally(() => {
          passing = false;
        }),
    );
  }

  schedulePass(0);

  return {
    pump,
    async hasDue() {
      try {
        return await hasDueDelivery(deps.db, deps.clock.now());
      } catch (err) {
        deps.log.error({ err }, "notification queue could not be read");
        return false;
      }
    },
    stop() {
      stopped = true;
      cancelPass?.();
      cancelPass = undefined;
    },
  };
}

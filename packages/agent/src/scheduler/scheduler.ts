/**
 * @module scheduler/scheduler
 * The agent's half of schedules (packages/protocol/PROTOCOL.md, "Schedules"): each
 * `schedule.set` replaces all schedule state, disabled entries and invalid cron expressions are
 * skipped (the latter logged), and the applied version is acked. Every enabled schedule has one
 * timer for its next tick; at the tick the agent sends `schedule.fire` and the server dispatches
 * the backups. A tick with no live connection is left to the agent's fire ledger (sent again once a
 * connection is ready, the latest per schedule: scheduler/fire-ledger.ts), and next-fire times live
 * in memory only: after a restart the server pushes the set again on hello.
 */
import type { ScheduleEntry, ScheduleFire, ScheduleSet } from "@fleetback/protocol";
import type { Logger } from "../log/logger.js";
import type { Clock } from "../time/clock.js";
import type { CancelTimer, Timers } from "../time/timers.js";
import { parseCron } from "./cron.js";

/**
 * Timers are re-armed at least this often: setTimeout cannot wait longer than ~24.8 days, and
 * re-checking the wall clock keeps a tick on time after a suspend or a clock step.
 */
export const MAX_TIMER_DELAY_MS = 60 * 60 * 1000;

export interface SchedulerOptions {
  timers: Timers;
  clock: Clock;
  log: Logger;
  /** Sends `schedule.fire`; false (or a promise of false) when no connection is live. */
  fire(payload: ScheduleFire): boolean | Promise<boolean>;
  /** Sends `schedule.ack`. */
  ack(version: number): void;
  /** IANA zone for cron evaluation; default: the host's local time zone. */
  timeZone?: string;
}

export interface Scheduler {
  /** Replaces all schedule state with `set` and acks its version; calls apply in arrival order. */
  apply(set: ScheduleSet): Promise<void>;
  /** Ids of the schedules armed now. */
  armed(): string[];
  /** Cancels every timer (agent shutdown). */
  stop(): void;
}

export function createScheduler(options: SchedulerOptions): Scheduler {
  const { timers, clock, log } = options;
  const cancels = new Map<string, CancelTimer>();
  const inFlight = new Set<Promise<unknown>>();
  let applying: Promise<void> = Promise.resolve();

  const send = (entry: ScheduleEntry, at: Date) => {
    const payload: ScheduleFire = { schedule_id: entry.id, scheduled_at: at.toISOString() };
    const report = (sent: boolean) => {
      if (sent) {
        log.info("schedule fired", { ...payload });
      } else {
        log.warn("schedule tick while not connected: sent once the connection is back", { ...payload });
      }
    };
    let outcome: boolean | Promise<boolean>;
    try {
      outcome = options.fire(payload);
    } catch (cause) {
      log.error("sending schedule.fire failed", { ...payload, error: String(cause) });
      return;
    }
    if (typeof outcome === "boolean") {
      report(outcome);
      return;
    }
    const pending = outcome.then(report, (cause: unknown) =>
      log.error("sending schedule.fire failed", { ...payload, error: String(cause) }),
    );
    inFlight.add(pending);
    void pending.finally(() => inFlight.delete(pending));
  };

  const arm = (entry: ScheduleEntry, next: (after: Date) => Date | undefined, due: Date) => {
    const wait = () => {
      const now = clock.now();
      if (now.getTime() < due.getTime()) {
        cancels.set(
          entry.id,
          timers.after(Math.min(due.getTime() - now.getTime(), MAX_TIMER_DELAY_MS), wait),
        );
        return;
      }
      send(entry, due);
      // From the later of tick and now: a tick is never fired twice, missed ones are not caught up.
      const following = next(new Date(Math.max(now.getTime(), due.getTime())));
      if (following === undefined) {
        cancels.delete(entry.id);
        log.warn("schedule has no further tick", { schedule_id: entry.id, cron: entry.cron });
        return;
      }
      arm(entry, next, following);
    };
    wait();
  };

  const clear = () => {
    for (const cancel of cancels.values()) {
      cancel();
    }
    cancels.clear();
  };

  const replace = async (set: ScheduleSet) => {
    clear();
    // A firing already on its way goes out before the new state takes over.
    await Promise.allSettled([...inFlight]);
    const now = clock.now();
    for (const entry of set.schedules) {
      if (!entry.enabled) {
        continue;
      }
      if (cancels.has(entry.id)) {
        log.warn("schedule listed twice in schedule.set; the first entry wins", { schedule_id: entry.id });
        continue;
      }
      const parsed = parseCron(entry.cron, options.timeZone);
      if (!parsed.ok) {
        log.warn("skipped a schedule with an invalid cron expression", {
          schedule_id: entry.id,
          cron: entry.cron,
          reason: parsed.reason,
        });
        continue;
      }
      const first = parsed.next(now);
      if (first === undefined) {
        log.warn("skipped a schedule whose cron expression never matches", {
          schedule_id: entry.id,
          cron: entry.cron,
        });
        continue;
      }
      arm(entry, parsed.next, first);
    }
    log.info("schedules applied", {
      version: set.version,
      armed: cancels.size,
      listed: set.schedules.length,
    });
    options.ack(set.version);
  };

  return {
    apply(set) {
      applying = applying
        .then(() => replace(set))
        .catch((cause: unknown) => log.error("applying schedule.set failed", { error: String(cause) }));
      return applying;
    },
    armed: () => [...cancels.keys()],
    stop: clear,
  };
}

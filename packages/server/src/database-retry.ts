/**
 * @module database-retry
 * Work that must not be lost to a database that is briefly away (PostgreSQL restarting, a failover,
 * a network blip): the agent's job reports and log lines. Retried only while the error says the
 * database could not be reached (isConnectionError), with growing pauses over about a minute;
 * any other error, or one that outlasts the pauses, reaches the caller, which then says so.
 */
import { isConnectionError } from "@fleetback/db";
import { sleep, systemTimers, type Timers } from "@fleetback/protocol";

/** About 61 s in all: a PostgreSQL restart or failover fits; a longer outage is an incident. */
export const DATABASE_RETRY_DELAYS_MS: readonly number[] = [
  100, 250, 500, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000,
];

export interface DatabaseRetryOptions {
  delaysMs?: readonly number[];
  /** Hears each retry (for a log line); `attempt` counts from 1. */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  timers?: Timers;
}

export async function retryWhileDatabaseDown<T>(
  work: () => Promise<T>,
  options: DatabaseRetryOptions = {},
): Promise<T> {
  const delays = options.delaysMs ?? DATABASE_RETRY_DELAYS_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const delay = delays[attempt];
      if (delay === undefined || !isConnectionError(error)) {
        throw error;
      }
      options.onRetry?.(error, attempt + 1, delay);
      await sleep(options.timers ?? systemTimers, delay);
    }
  }
}

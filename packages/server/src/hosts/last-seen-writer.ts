/**
 * @module hosts/last-seen-writer
 * `hosts.last_seen_at` from heartbeats, written in batches: 10,000 agents send 333 heartbeats a
 * second, and one UPDATE each would make the database (PGlite has one connection) the fleet's
 * bottleneck. Touches wait at most `flushDelayMs` and go in one statement; a later touch of the
 * same host replaces an earlier one, and a stored time is never moved backwards. What reads
 * last_seen_at (the offline sweeper, agent_offline after an hour) works in minutes, so a second
 * of delay changes nothing it decides.
 */

import type { Database } from "@fleetback/db";
import { systemTimers, type Timers } from "@fleetback/protocol";
import { sql } from "drizzle-orm";
import type { Logger } from "../log.js";

export interface LastSeenWriter {
  touch(hostId: string, at: Date): void;
  /** Writes what is pending now (shutdown, tests). */
  flush(): Promise<void>;
}

/** Hosts per statement: the VALUES list stays well under any parameter limit. */
const BATCH_HOSTS = 1_000;

export function createLastSeenWriter(options: {
  db: Database;
  log: Logger;
  timers?: Timers;
  flushDelayMs?: number;
}): LastSeenWriter {
  const timers = options.timers ?? systemTimers;
  const delay = options.flushDelayMs ?? 1_000;
  let pending = new Map<string, Date>();
  let scheduled: (() => void) | undefined;
  let writing: Promise<void> = Promise.resolve();

  const write = async (batch: Map<string, Date>) => {
    const rows = [...batch];
    for (let start = 0; start < rows.length; start += BATCH_HOSTS) {
      const values = rows
        .slice(start, start + BATCH_HOSTS)
        .map(([id, at]) => sql`(${id}, ${at.toISOString()}::timestamptz)`);
      await options.db.execute(sql`
        update hosts set last_seen_at = v.at
        from (values ${sql.join(values, sql`, `)}) as v(id, at)
        where hosts.id = v.id and (hosts.last_seen_at is null or hosts.last_seen_at < v.at)`);
    }
  };

  const flush = (): Promise<void> => {
    scheduled?.();
    scheduled = undefined;
    if (pending.size === 0) {
      return writing;
    }
    const batch = pending;
    pending = new Map();
    writing = writing
      .then(() => write(batch))
      .catch((err: unknown) => options.log.warn({ err, hosts: batch.size }, "recording heartbeats failed"));
    return writing;
  };

  return {
    touch(hostId, at) {
      const known = pending.get(hostId);
      if (known === undefined || known < at) {
        pending.set(hostId, at);
      }
      scheduled ??= timers.after(delay, () => {
        scheduled = undefined;
        void flush();
      });
    },
    flush,
  };
}

/**
 * @module scheduler/fire-ledger
 * Makes `schedule.fire` at-least-once without a wire change. The server acts on a slot once (it
 * claims `last_fired_at` before dispatching), so sending a firing twice is harmless and sending it
 * never loses a backup. Two cases lost one before:
 *   - a tick while no connection was live (a server restart, a replica killed): skipped;
 *   - a firing written to a socket whose server died before reading it: gone with the socket.
 * The ledger keeps each schedule's latest firing with the connection it went out on. When the
 * next connection is ready, every firing that was missed, or sent on an earlier connection not
 * long ago, is sent again, the latest per schedule only: an agent offline for a day catches up
 * with one backup per schedule, not one per missed tick.
 */
import type { ScheduleFire } from "@fleetback/protocol";

/** A firing sent on an earlier connection this recently may not have been read: sent again. */
export const RESEND_WITHIN_MS = 5 * 60_000;
/** A tick missed while disconnected for longer than this is not caught up on reconnect. */
export const CATCH_UP_WITHIN_MS = 24 * 60 * 60_000;

export interface FireLedger {
  /** Records a firing: `sent` says whether a live connection took it. */
  record(payload: ScheduleFire, sent: boolean, now: Date): void;
  /** A new connection is ready: the firings to send again on it (oldest first), now recorded as sent on it. */
  replay(now: Date): ScheduleFire[];
  /** Forgets schedules that no longer exist (a new schedule.set). */
  keepOnly(scheduleIds: ReadonlySet<string>): void;
}

interface Entry {
  payload: ScheduleFire;
  /** The connection it went out on; undefined while it waits for one. */
  connection: number | undefined;
  at: number;
}

export function createFireLedger(): FireLedger {
  const latest = new Map<string, Entry>();
  let connection = 0;
  return {
    record(payload, sent, now) {
      latest.set(payload.schedule_id, {
        payload,
        connection: sent ? connection : undefined,
        at: now.getTime(),
      });
    },
    replay(now) {
      connection += 1;
      const due: Entry[] = [];
      for (const [id, entry] of latest) {
        const age = now.getTime() - entry.at;
        const missed = entry.connection === undefined && age <= CATCH_UP_WITHIN_MS;
        const unconfirmed = entry.connection !== undefined && age <= RESEND_WITHIN_MS;
        if (missed || unconfirmed) {
          due.push(entry);
          latest.set(id, { ...entry, connection });
        } else if (entry.connection === undefined) {
          latest.delete(id);
        }
      }
      return due.sort((a, b) => a.at - b.at).map((entry) => entry.payload);
    },
    keepOnly(scheduleIds) {
      for (const id of [...latest.keys()]) {
        if (!scheduleIds.has(id)) {
          latest.delete(id);
        }
      }
    },
  };
}

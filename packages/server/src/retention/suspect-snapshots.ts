/**
 * @module retention/suspect-snapshots
 * A snapshot's time is whatever its host claimed (`restic backup --time` sets any time), so a host
 * could back-date or future-date snapshots to make the time rules keep or remove what it likes. The
 * server knows when it first saw each snapshot; a claim too far from that is suspect. A suspect is
 * kept, never counted toward a rule, never removed by one: at worst a false suspect keeps more.
 */
import type { Instant } from "./restic-time.js";

export interface SuspectTolerance {
  /** How much earlier than its first sighting a snapshot's time may be. */
  pastMs: number;
  /** How much later than its first sighting a snapshot's time may be. */
  futureMs: number;
}

const HOUR_MS = 3_600_000;

/**
 * A snapshot's time is when its backup started, and the server first sees it at the first listing
 * after the backup ended. A first full backup of a large host can run most of a day, and the
 * listing can follow hours later (the host was offline, the list was postponed behind other jobs),
 * so 36 h in the past is beyond what an honest backup reaches while a back-dated one, made to outlast
 * a daily or weekly rule, is days off. A time after the first sighting is never honest, save for
 * the host's clock running ahead of the server's: 1 h covers a clock that is off, not a forged date.
 */
export const DEFAULT_SUSPECT_TOLERANCE: SuspectTolerance = { pastMs: 36 * HOUR_MS, futureMs: HOUR_MS };

/** Snapshots seen before the server recorded first sightings (`firstSeenAt` null) are trusted. */
export function isSuspect(claimed: Instant, firstSeenAt: Date | null, tolerance: SuspectTolerance): boolean {
  if (firstSeenAt === null) {
    return false;
  }
  const claimedMs = claimed.seconds * 1000 + claimed.nanos / 1_000_000;
  const offsetMs = claimedMs - firstSeenAt.getTime();
  return offsetMs < -tolerance.pastMs || offsetMs > tolerance.futureMs;
}

/**
 * @module config/job-timeouts
 * The longest a job of each kind may run on this agent before it is stopped and ends `failed`.
 * A repository that cannot be reached makes restic retry for a long time (0.18: up to 15 minutes
 * per request, for every request); the bound keeps one dead repository from holding the queue,
 * which runs one job at a time, for hours. The defaults fit a large first backup; each is set with
 * `FLEETBACK_JOB_TIMEOUT_<KIND>` in the agent's environment (the unit's `Environment=`), e.g.
 * `FLEETBACK_JOB_TIMEOUT_BACKUP=48h`, as `<n>s`, `<n>m`, `<n>h`, `<n>d` (or a bare number of
 * seconds), or `0`/`off` for no bound. The server knows nothing of it: no wire change.
 */
import type { JobKind } from "@fleetback/protocol";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** ms per kind; a kind missing here (added to the contract later) gets FALLBACK_JOB_TIMEOUT_MS. */
export const DEFAULT_JOB_TIMEOUTS_MS: Readonly<Partial<Record<JobKind, number>>> = {
  backup: 24 * HOUR,
  check: 24 * HOUR,
  prune: 24 * HOUR,
  restore: 24 * HOUR,
  // A first copy to a new mirror moves all of the repository's data, like a first backup.
  copy: 24 * HOUR,
  forget: HOUR,
  diff: HOUR,
  drill: 2 * HOUR,
  init: 10 * MINUTE,
  unlock: 10 * MINUTE,
};

export const FALLBACK_JOB_TIMEOUT_MS = 24 * HOUR;

/** ms per kind; null is "no bound". */
export type JobTimeouts = Readonly<Record<string, number | null>>;

const UNITS: Record<string, number> = { s: 1000, m: MINUTE, h: HOUR, d: 24 * HOUR };

/** ms, null for "no bound", or undefined when the text is not a duration. */
export function parseJobTimeout(text: string): number | null | undefined {
  const value = text.trim().toLowerCase();
  if (value === "0" || value === "off" || value === "none") {
    return null;
  }
  const match = /^(\d+(?:\.\d+)?)\s*(s|m|h|d|sec|min)?$/.exec(value);
  if (match === null) {
    return undefined;
  }
  const unit = match[2] === "sec" ? "s" : match[2] === "min" ? "m" : (match[2] ?? "s");
  const ms = Math.round(Number(match[1]) * (UNITS[unit] ?? 1000));
  return ms > 0 ? ms : null;
}

export function envNameOf(kind: string): string {
  return `FLEETBACK_JOB_TIMEOUT_${kind.toUpperCase()}`;
}

export interface JobTimeoutSettings {
  timeouts: JobTimeouts;
  /** One sentence per variable that was set but not understood (its default is kept). */
  problems: string[];
}

/** The defaults, overridden by FLEETBACK_JOB_TIMEOUT_<KIND> variables. */
export function jobTimeoutsFromEnv(env: NodeJS.ProcessEnv, kinds: readonly string[]): JobTimeoutSettings {
  const timeouts: Record<string, number | null> = {};
  const problems: string[] = [];
  for (const kind of kinds) {
    const fallback = DEFAULT_JOB_TIMEOUTS_MS[kind as JobKind] ?? FALLBACK_JOB_TIMEOUT_MS;
    const name = envNameOf(kind);
    const text = env[name];
    if (text === undefined || text.trim() === "") {
      timeouts[kind] = fallback;
      continue;
    }
    const parsed = parseJobTimeout(text);
    if (parsed === undefined) {
      problems.push(
        `${name}="${text}" is not a duration such as 90s, 10m, 24h or off; using ${formatTimeout(fallback)}`,
      );
      timeouts[kind] = fallback;
    } else {
      timeouts[kind] = parsed;
    }
  }
  return { timeouts, problems };
}

/** The bound for a kind: the setting, else its default, else the fallback. */
export function timeoutOf(timeouts: JobTimeouts | undefined, kind: string): number | null {
  const set = timeouts?.[kind];
  if (set !== undefined) {
    return set;
  }
  return DEFAULT_JOB_TIMEOUTS_MS[kind as JobKind] ?? FALLBACK_JOB_TIMEOUT_MS;
}

/** "10 min", "24 h", "1 h 30 min", "45 s": how the job's error names the bound. */
export function formatTimeout(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) {
    return `${seconds} s`;
  }
  const minutes = Math.floor(seconds / 60);
  const restSeconds = seconds % 60;
  if (minutes < 60) {
    return restSeconds === 0 ? `${minutes} min` : `${minutes} min ${restSeconds} s`;
  }
  const hours = Math.floor(minutes / 60);
  const restMinutes = minutes % 60;
  return restMinutes === 0 ? `${hours} h` : `${hours} h ${restMinutes} min`;
}

/**
 * @module restic/unreachable-watch
 * Watches one restic process for a repository that stopped answering. restic retries a failed
 * request for up to 15 minutes (0.18; 0.14 ten times per request), and a backup keeps printing
 * its unchanged status meanwhile, so the job looked running for as long (issue 31). The first
 * failure line (backend-failure.ts) starts the clock; restic's "operation successful after N
 * retries" stops it. When failures have gone on for `afterMs`, the watch asks the repository
 * itself (the probe: a fresh `restic cat config`), because restic 0.14 never says that a retried
 * request succeeded and a short outage must not cost a healthy backup: a probe that gets an
 * answer starts the watch over, one that does not makes the watch trip. Status lines never reset
 * it: restic prints them whether or not anything reaches the repository. Time comes from the
 * agent's timers and clock, so tests drive it by hand.
 */
import { formatTimeout, parseJobTimeout } from "../config/job-timeouts.js";
import type { Clock } from "../time/clock.js";
import type { CancelTimer, Timers } from "../time/timers.js";
import { readBackendLine } from "./backend-failure.js";
import type { RepositoryUnreachable } from "./guard-verdict.js";

/** How long failures may go on before the repository counts as unreachable. */
export const REPOSITORY_UNREACHABLE_MS = 60_000;

/**
 * Sets REPOSITORY_UNREACHABLE_MS on an agent (the unit's `Environment=`), in the job timeouts'
 * format (`90s`, `5m`, `off`): longer for a link that drops out for minutes and comes back, shorter
 * in tests that stop a repository on purpose.
 */
export const UNREACHABLE_AFTER_ENV = "FLEETBACK_REPOSITORY_UNREACHABLE_AFTER";

/** The setting from the environment; a value that is not a duration keeps the default. */
export function unreachableAfterFromEnv(env: NodeJS.ProcessEnv): { ms: number | null; problem?: string } {
  const text = env[UNREACHABLE_AFTER_ENV];
  if (text === undefined || text.trim() === "") {
    return { ms: REPOSITORY_UNREACHABLE_MS };
  }
  const parsed = parseJobTimeout(text);
  if (parsed === undefined) {
    return {
      ms: REPOSITORY_UNREACHABLE_MS,
      problem: `${UNREACHABLE_AFTER_ENV}="${text}" is not a duration such as 60s, 5m or off; using ${formatTimeout(REPOSITORY_UNREACHABLE_MS)}`,
    };
  }
  return { ms: parsed };
}

export type ProbeAnswer = { answered: true } | { answered: false; cause: string | undefined };

export interface UnreachableWatchOptions {
  timers: Timers;
  clock: Clock;
  afterMs: number;
  /** Asks the repository directly; aborted when the watch stops. */
  probe(signal: AbortSignal): Promise<ProbeAnswer>;
  /** The repository answered the probe although restic kept failing: the watch starts over. */
  onAnswered?(): void;
  /** Called once, when the watch trips. */
  onUnreachable(verdict: RepositoryUnreachable): void;
}

export interface UnreachableWatch {
  /** One stderr line of the watched restic. */
  observe(text: string): void;
  /** The process ended: no more timers or probes. */
  stop(): void;
  /** Set once the watch tripped. */
  readonly verdict: RepositoryUnreachable | undefined;
  /** The first failure of the current run of failures (ms since the epoch), if one is going on. */
  readonly failingSince: number | undefined;
  /** The last cause restic printed. */
  readonly lastCause: string | undefined;
}

export function createUnreachableWatch(options: UnreachableWatchOptions): UnreachableWatch {
  const { timers, clock, afterMs } = options;
  let failingSince: number | undefined;
  let lastCause: string | undefined;
  let cancelTimer: CancelTimer | undefined;
  let probing: AbortController | undefined;
  let verdict: RepositoryUnreachable | undefined;
  let stopped = false;

  const reset = () => {
    failingSince = undefined;
    cancelTimer?.();
    cancelTimer = undefined;
  };

  const askRepository = async () => {
    cancelTimer = undefined;
    const since = failingSince;
    if (stopped || since === undefined) {
      return;
    }
    probing = new AbortController();
    const answer = await options.probe(probing.signal);
    probing = undefined;
    // A recovery line while the probe ran also means the repository answers.
    if (stopped || failingSince !== since) {
      return;
    }
    if (answer.answered) {
      reset();
      options.onAnswered?.();
      return;
    }
    verdict = {
      cause: answer.cause ?? lastCause ?? "no answer",
      silentMs: clock.now().getTime() - since,
      stoppedByAgent: true,
    };
    stopped = true;
    options.onUnreachable(verdict);
  };

  return {
    observe(text) {
      if (stopped) {
        return;
      }
      const line = readBackendLine(text);
      if (line === undefined) {
        return;
      }
      if (line.kind === "recovered") {
        reset();
        return;
      }
      lastCause = line.cause;
      if (failingSince === undefined) {
        failingSince = clock.now().getTime();
        cancelTimer = timers.after(afterMs, () => void askRepository(), { unref: true });
      }
    },
    stop() {
      stopped = true;
      cancelTimer?.();
      probing?.abort();
    },
    get verdict() {
      return verdict;
    },
    get failingSince() {
      return failingSince;
    },
    get lastCause() {
      return lastCause;
    },
  };
}

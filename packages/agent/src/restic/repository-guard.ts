/**
 * @module restic/repository-guard
 * Wraps the jobs' restic so that every command on a repository (backup, forget, prune, check,
 * copy, restore, the snapshot listing…) gets the same two guards, without each job knowing:
 *
 * - A repository that stopped answering (unreachable-watch.ts): restic is stopped the usual way
 *   (SIGINT first, so it still tries to remove its lock) and the run counts as failed, not
 *   cancelled. A run that restic itself gave up with a network cause counts as unreachable too
 *   (0.14 fails at once when the repository is down as it starts).
 * - A stale lock: restic cannot remove its lock from a repository that went away under it, and
 *   the lock then refuses every forget, prune and check (and, when exclusive, every backup). On
 *   "repository is already locked" the guard runs `restic unlock` once (never --remove-all: restic
 *   removes only locks it finds stale, those of a process gone from this same host or older than
 *   30 minutes) and the command once more.
 *
 * A failed run's verdict goes to the guard record (guard-record.ts), where the job reads it. What
 * the guard does is told in the job's log as stderr lines starting with `fleetback-agent:`, the
 * only channel a restic caller reads.
 */

import type { Clock } from "../time/clock.js";
import type { Timers } from "../time/timers.js";
import { networkCauseOf } from "./backend-failure.js";
import { createErrorCollector } from "./error-collector.js";
import type { GuardRecord } from "./guard-record.js";
import type { GuardVerdict } from "./guard-verdict.js";
import { createLockReader, type LockHolder } from "./lock-holder.js";
import { probeRepository } from "./repository-probe.js";
import type { Restic, ResticRequest, ResticResult } from "./restic.js";
import { createUnreachableWatch, REPOSITORY_UNREACHABLE_MS } from "./unreachable-watch.js";

export const GUARD_NOTICE_PREFIX = "fleetback-agent: ";

/** Subcommands that never get the unlock-and-retry: unlock itself, and init (no lock yet). */
const NO_LOCK_RETRY = new Set(["unlock", "init"]);

export interface RepositoryGuardOptions {
  timers: Timers;
  clock: Clock;
  /** How long failures may go on; null turns the watch off. Default REPOSITORY_UNREACHABLE_MS. */
  unreachableAfterMs?: number | null;
  /** Where failed runs' verdicts go for the running job. */
  record?: GuardRecord;
  /**
   * Runs the probe and `restic unlock`; default the wrapped restic. The restore helper's restic
   * runs `restore` and nothing else, so its guard asks the agent's own.
   */
  direct?: Restic;
}

/** Long enough for a slow link to open the repository, short enough to stay well inside 2 min. */
export function probeTimeoutOf(afterMs: number): number {
  return Math.min(Math.max(afterMs / 2, 5_000), 30_000);
}

function describeHolder(holder: LockHolder): string {
  const age = holder.age === undefined ? "" : `, ${holder.age} old`;
  return `PID ${holder.pid} on ${holder.host}${age}`;
}

function failedRun(result: ResticResult, request: ResticRequest): boolean {
  return result.kind !== "exited" || (result.exitCode !== 0 && request.signal?.aborted !== true);
}

interface Watched {
  result: ResticResult;
  verdict: GuardVerdict;
  holder: LockHolder | undefined;
  /** The stderr text that best explains this run's failure. */
  error: string | undefined;
}

export function guardRepository(inner: Restic, options: RepositoryGuardOptions): Restic {
  const direct = options.direct ?? inner;
  const afterMs =
    options.unreachableAfterMs === undefined ? REPOSITORY_UNREACHABLE_MS : options.unreachableAfterMs;

  const notice = (request: ResticRequest, text: string) =>
    request.onLine({ stream: "stderr", text: `${GUARD_NOTICE_PREFIX}${text}` });

  /** One restic process under the unreachable watch. */
  const watched = async (request: ResticRequest, restic = inner): Promise<Watched> => {
    const controller = new AbortController();
    const follow = () => controller.abort(request.signal?.reason);
    if (request.signal?.aborted) {
      follow();
    }
    request.signal?.addEventListener("abort", follow, { once: true });
    const lock = createLockReader();
    const errors = createErrorCollector();
    let fatalCause: string | undefined;
    // A caller that bounds the run itself as tightly (the copy's look at the mirror) keeps its words.
    const watch =
      afterMs === null || (request.timeoutMs !== undefined && request.timeoutMs <= afterMs)
        ? undefined
        : createUnreachableWatch({
            timers: options.timers,
            clock: options.clock,
            afterMs,
            probe: (signal) =>
              probeRepository(direct, request, {
                timers: options.timers,
                timeoutMs: probeTimeoutOf(afterMs),
                signal,
              }),
            onAnswered: () =>
              notice(
                request,
                "restic keeps retrying, but the repository answered a direct request; waiting on",
              ),
            onUnreachable: (verdict) => {
              notice(
                request,
                `the repository did not answer for ${Math.round((verdict.silentMs ?? 0) / 1000)} s (${verdict.cause}); stopping restic`,
              );
              controller.abort();
            },
          });
    const result = await restic.run({
      ...request,
      signal: controller.signal,
      onLine: (line) => {
        if (line.stream === "stderr") {
          watch?.observe(line.text);
          lock.observe(line.text);
          errors.observe("stderr", line.text);
          if (line.text.startsWith("Fatal:") || line.text.includes('"exit_error"')) {
            fatalCause = networkCauseOf(line.text);
          }
        }
        request.onLine(line);
      },
    });
    watch?.stop();
    request.signal?.removeEventListener("abort", follow);
    const outcome = { verdict: {}, holder: undefined, error: errors.best() };
    if (result.kind !== "exited" || request.signal?.aborted) {
      return { ...outcome, result };
    }
    const tripped = watch?.verdict;
    if (tripped !== undefined) {
      // Stopped by the guard, not by a cancel; restic may also have just finished its work.
      return { ...outcome, result: { ...result, cancelled: false }, verdict: { unreachable: tripped } };
    }
    if (result.exitCode !== 0 && !result.cancelled && !result.timedOut && fatalCause !== undefined) {
      const since = watch?.failingSince;
      const silentMs = since === undefined ? undefined : options.clock.now().getTime() - since;
      return {
        ...outcome,
        result,
        verdict: { unreachable: { cause: fatalCause, silentMs, stoppedByAgent: false } },
      };
    }
    return { ...outcome, result, holder: result.exitCode === 0 ? undefined : lock.holder() };
  };

  /** The command, and once more after `restic unlock` when a lock refused it. */
  const guarded = async (request: ResticRequest): Promise<Watched> => {
    const first = await watched(request);
    const holder = first.holder;
    if (
      holder === undefined ||
      NO_LOCK_RETRY.has(request.subcommand) ||
      // A copy's lock may be on either repository: its job tells the operator.
      request.fromRepository !== undefined ||
      request.signal?.aborted
    ) {
      return holder === undefined
        ? first
        : { ...first, verdict: { locked: { ...holder, unlockRan: false } } };
    }
    notice(
      request,
      `the repository is locked by ${describeHolder(holder)}; running restic unlock, which removes the lock only if restic finds it stale (its process gone from that host, or 30 minutes old), then trying once more`,
    );
    const unlock = await watched(
      {
        subcommand: "unlock",
        repository: request.repository,
        caps: request.caps,
        signal: request.signal,
        onLine: request.onLine,
      },
      direct,
    );
    if (request.signal?.aborted) {
      return first;
    }
    if (unlock.verdict.unreachable !== undefined) {
      return unlock;
    }
    const second = await watched(request);
    const afterUnlock = { error: second.error };
    return second.holder === undefined
      ? { ...second, verdict: { ...second.verdict, afterUnlock } }
      : { ...second, verdict: { afterUnlock, locked: { ...second.holder, unlockRan: true } } };
  };

  return {
    command: inner.command,
    async run(request) {
      if (request.repository === undefined) {
        return inner.run(request);
      }
      const { result, verdict } = await guarded(request);
      if (failedRun(result, request)) {
        options.record?.failed(verdict);
      }
      return result;
    },
  };
}

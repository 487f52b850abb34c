/**
 * @module jobs/append-only
 * Storage that refuses deletes: rest-server with `--append-only` answers 403 to every DELETE but
 * a lock's. restic 0.18 prints `Remove(<snapshot/1344c020a8>) failed: unexpected HTTP response
 * (403): 403 Forbidden` and a forget still exits 0, so the job said "removed 1 snapshot" while
 * the snapshot stayed (issue 31); restic 0.14 retries each delete for ~45 s
 * (`Remove(<snapshot/7148b69d08>) returned error, retrying after 552ms: blob not removed, server
 * response: 403 Forbidden (403)`) and then fails with a Go stack trace. A 403 does not go away on
 * a retry, so the first refused delete decides the job, which fails with one sentence. A restic
 * that retries it is stopped at once (SIGINT, after which it removes its lock, which the storage
 * allows); one that gives up by itself (0.18) runs to its end and prints what it meant to remove.
 */
import type { OutputLine } from "../restic/runner.js";
import { failed, type JobOutcome } from "./job-types.js";

export const APPEND_ONLY_ERROR =
  "the repository refused to delete (HTTP 403): it is append-only storage; forget and prune must run with credentials that may delete";

/** A refused delete of anything but a lock (restic tolerates a lock it cannot remove). */
const REFUSED_DELETE = /^Remove\(<(?!lock\/)[^>]*>\) (?:failed|returned error)\b.*\b403\b/;

/** restic 0.14's wording when it will try the same delete again. */
const RETRYING = /^Remove\([^)]*\) returned error, retrying after /;

export function isRefusedDelete(text: string): boolean {
  return REFUSED_DELETE.test(text);
}

export interface DeleteRefusalWatch {
  /** For the restic run: follows the job's signal, and aborts at the first refused delete restic would retry. */
  signal: AbortSignal;
  /** Sees every output line of the run. */
  observe(line: OutputLine): void;
  /** True once a delete was refused. */
  readonly refused: boolean;
  /** The job's outcome: the append-only failure when a delete was refused, unless the job was cancelled. */
  settle(outcome: JobOutcome): JobOutcome;
}

/** `jobSignal` is the job's own (cancel); `log` writes an agent line to the job log. */
export function watchDeleteRefusal(jobSignal: AbortSignal, log: (line: string) => void): DeleteRefusalWatch {
  const stop = new AbortController();
  let refused = false;
  return {
    signal: AbortSignal.any([jobSignal, stop.signal]),
    observe(line) {
      if (stop.signal.aborted || line.stream !== "stderr" || !isRefusedDelete(line.text)) {
        return;
      }
      refused = true;
      if (RETRYING.test(line.text)) {
        log("the repository refused a delete (HTTP 403); restic is stopped instead of left to retry it");
        stop.abort();
      }
    },
    get refused() {
      return refused;
    },
    settle(outcome) {
      if (!refused || jobSignal.aborted) {
        return outcome;
      }
      log(APPEND_ONLY_ERROR);
      return failed(APPEND_ONLY_ERROR, outcome.status === "cancelled" ? null : outcome.exit_code);
    },
  };
}

// The exit code a shell would report for a child: its own, or 128 + its signal's number. Shared by
// the scripts that run turbo (run-tests.mjs, test-lanes.mjs) and pass on the worst code they saw.
const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** @param {number | null} status @param {NodeJS.Signals | null} signal */
export function exitCodeOf(status, signal) {
  return status !== null ? status : 128 + (SIGNALS[signal] ?? 0);
}

/**
 * @module retries/run-caps
 * An operator's bandwidth caps for one run (run-now), kept in the job's params and in a pending
 * run, so that a retry of that run goes under the same caps as its first try.
 */

/** KiB/s for one run; null or absent = the group's own cap. */
export interface RunCaps {
  up?: number | null;
  down?: number | null;
}

/** The run's own caps as the job's params keep them, so a retry of the job runs under them too. */
export function runCapsParams(run: RunCaps | undefined): Record<string, unknown> {
  const up = run?.up ?? null;
  const down = run?.down ?? null;
  return up === null && down === null ? {} : { run_caps: { up_kbps: up, down_kbps: down } };
}

/** Reads back what runCapsParams stored; anything else (an older job) is no run caps. */
export function runCapsFromParams(params: Record<string, unknown>): RunCaps | undefined {
  const stored = params.run_caps;
  if (typeof stored !== "object" || stored === null) {
    return undefined;
  }
  const cap = (value: unknown) =>
    typeof value === "number" && Number.isInteger(value) && value > 0 ? value : null;
  const { up_kbps, down_kbps } = stored as Record<string, unknown>;
  return { up: cap(up_kbps), down: cap(down_kbps) };
}

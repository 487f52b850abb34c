/**
 * @module jobs/tool-outcome
 * Maps how a restic process ended to a job outcome; the error text it names comes from the
 * collector in restic/error-collector.ts.
 */
import type { ResticResult } from "../restic/restic.js";
import type { JobOutcome } from "./job-types.js";

export function toolOutcome(result: ResticResult, command: string, error: string | undefined): JobOutcome {
  switch (result.kind) {
    case "invalid_credentials":
      return { status: "failed", exit_code: null, error: result.message };
    case "spawn_failed":
      return {
        status: "failed",
        exit_code: null,
        error:
          result.error ??
          (result.missing
            ? `restic not found (${command})`
            : `restic could not be started: ${result.message}`),
      };
    case "exited":
      if (result.cancelled) {
        return { status: "cancelled", exit_code: result.exitCode };
      }
      if (result.timedOut) {
        return { status: "failed", exit_code: result.exitCode, error: "restic timed out" };
      }
      if (result.exitCode === 0) {
        return { status: "succeeded", exit_code: 0 };
      }
      return {
        status: "failed",
        exit_code: result.exitCode,
        error:
          error ??
          (result.exitCode === null
            ? `restic was ended by ${result.signal}`
            : `restic exited with code ${result.exitCode}`),
      };
  }
}

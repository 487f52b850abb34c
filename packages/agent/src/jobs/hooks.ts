/**
 * @module jobs/hooks
 * Pre and post hooks: operator shell text run by `/bin/sh -c` (Windows: `cmd /c`) from `/`, in
 * the agent's neutral environment (repository and provider variables dropped, no credentials)
 * plus FLEETBACK_JOB_ID, FLEETBACK_JOB_KIND and, for the post hook, FLEETBACK_JOB_STATUS. They
 * run through the same process port as restic, so a cancel or the timeout kills the hook's whole
 * process group. Their output goes to the job log on the `agent` stream, scrubbed.
 */
import type { CommandRun, FinishedJobStatus } from "@fleetback/protocol";
import { neutralEnvironment } from "../restic/environment.js";
import type { ResticRunner } from "../restic/runner.js";

export const DEFAULT_HOOK_TIMEOUT_MS = 10 * 60 * 1000;

export type HookName = "pre-hook" | "post-hook";

export interface HookRequest {
  name: HookName;
  script: string;
  command: CommandRun;
  /** For the post hook: how the job ended. */
  status?: FinishedJobStatus;
  signal?: AbortSignal;
  /** Each output line, already prefixed and scrubbed. */
  log(line: string): void;
}

export type HookResult = { ok: true } | { ok: false; error: string; exitCode: number | null };

export interface HookRunnerOptions {
  runner: ResticRunner;
  parentEnv: NodeJS.ProcessEnv;
  /** Removes secrets from hook output. */
  scrub: (text: string) => string;
  timeoutMs?: number;
  platform?: NodeJS.Platform;
}

export type HookRunner = (request: HookRequest) => Promise<HookResult>;

export function createHookRunner(options: HookRunnerOptions): HookRunner {
  const timeoutMs = options.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
  const windows = (options.platform ?? process.platform) === "win32";
  return async (request) => {
    const env = neutralEnvironment(options.parentEnv);
    env.FLEETBACK_JOB_ID = request.command.job_id;
    env.FLEETBACK_JOB_KIND = request.command.kind;
    if (request.status !== undefined) {
      env.FLEETBACK_JOB_STATUS = request.status;
    }
    const result = await options.runner.run({
      command: windows ? "cmd" : "/bin/sh",
      args: windows ? ["/c", request.script] : ["-c", request.script],
      env,
      cwd: windows ? undefined : "/",
      signal: request.signal,
      timeoutMs,
      onLine: (line) => request.log(`${request.name}: ${options.scrub(line.text)}`),
    });
    if (result.kind === "spawn_failed") {
      return { ok: false, error: `${request.name} could not be started: ${result.message}`, exitCode: null };
    }
    if (result.cancelled) {
      return { ok: false, error: `${request.name} cancelled`, exitCode: result.exitCode };
    }
    if (result.timedOut) {
      return { ok: false, error: `${request.name} failed (timed out)`, exitCode: result.exitCode };
    }
    if (result.exitCode === 0) {
      return { ok: true };
    }
    const how = result.exitCode === null ? `signal ${result.signal}` : `exit ${result.exitCode}`;
    return { ok: false, error: `${request.name} failed (${how})`, exitCode: result.exitCode };
  };
}

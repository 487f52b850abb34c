/**
 * @module restic/spawn-adapter
 * The real ResticRunner: spawns the binary in its own process group (`detached`), so that a
 * cancel or timeout reaches restic and anything it started (ssh, rclone, hooks) at once.
 *
 * The stop escalates: SIGINT, then SIGTERM halfway through the grace period, then SIGKILL at its
 * end. SIGINT comes first because restic before 0.17 removes its lock only on SIGINT (SIGTERM
 * cleanup came with restic PR #4703): a cancelled 0.14 backup stopped by SIGTERM left a lock that
 * made the next forget, prune or check fail with "repository is already locked". SIGTERM follows
 * for whatever ignores SIGINT, such as a shell's background children.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { systemTimers, type Timers } from "../time/timers.js";
import { createLineSplitter } from "./line-splitter.js";
import type { OutputStream, ProcessResult, ProcessSpec, ResticRunner } from "./runner.js";

export const DEFAULT_KILL_GRACE_MS = 10_000;
/** After the leader exits, stray group members holding its pipes get this long before SIGKILL. */
const STRAY_PIPE_GRACE_MS = 2_000;

export interface SpawnRunnerOptions {
  killGraceMs?: number;
  /** Runs the timeout, the kill escalation and the stray-pipe grace; the system port by default. */
  timers?: Timers;
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) {
    return;
  }
  try {
    // A negative pid addresses the process group; Windows has none, so the child alone.
    if (process.platform === "win32") {
      child.kill(signal);
    } else {
      process.kill(-child.pid, signal);
    }
  } catch {
    // ESRCH: the group is already gone.
  }
}

export function createSpawnRunner(options: SpawnRunnerOptions = {}): ResticRunner {
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const timers = options.timers ?? systemTimers;
  return {
    run(spec: ProcessSpec): Promise<ProcessResult> {
      return new Promise((resolve) => {
        let child: ChildProcess;
        try {
          child = spawn(spec.command, [...spec.args], {
            env: spec.env,
            cwd: spec.cwd,
            detached: true,
            stdio: ["ignore", "pipe", "pipe"],
            windowsHide: true,
          });
        } catch (cause) {
          resolve({ kind: "spawn_failed", missing: false, message: String(cause) });
          return;
        }

        let cancelled = false;
        let timedOut = false;
        let settled = false;
        const cleanups: (() => void)[] = [];

        const pipe = (stream: OutputStream, readable: NodeJS.ReadableStream | null) => {
          const splitter = createLineSplitter((text) => spec.onLine({ stream, text }), spec.maxLineLength);
          readable?.on("data", (chunk: Buffer) => splitter.push(chunk));
          readable?.on("end", () => splitter.end());
        };
        if (spec.rawStdout && child.stdout) {
          spec.rawStdout(child.stdout);
        } else {
          pipe("stdout", child.stdout);
        }
        pipe("stderr", child.stderr);

        let terminating = false;
        const terminate = () => {
          if (terminating) {
            return;
          }
          terminating = true;
          signalGroup(child, "SIGINT");
          cleanups.push(
            timers.after(killGraceMs / 2, () => signalGroup(child, "SIGTERM")),
            timers.after(killGraceMs, () => signalGroup(child, "SIGKILL")),
          );
        };

        const finish = (result: ProcessResult) => {
          if (settled) {
            return;
          }
          settled = true;
          for (const cleanup of cleanups) {
            cleanup();
          }
          resolve(result);
        };

        if (spec.signal) {
          const onAbort = () => {
            cancelled = true;
            terminate();
          };
          if (spec.signal.aborted) {
            onAbort();
          } else {
            spec.signal.addEventListener("abort", onAbort, { once: true });
            cleanups.push(() => spec.signal?.removeEventListener("abort", onAbort));
          }
        }
        if (spec.timeoutMs !== undefined) {
          cleanups.push(
            timers.after(spec.timeoutMs, () => {
              timedOut = true;
              terminate();
            }),
          );
        }

        child.on("error", (error: NodeJS.ErrnoException) => {
          if (child.pid === undefined) {
            finish({ kind: "spawn_failed", missing: error.code === "ENOENT", message: error.message });
          }
        });
        child.on("exit", () => {
          if (cancelled || timedOut) {
            // The leader is gone; whatever is left of its group is a stray.
            signalGroup(child, "SIGKILL");
          }
          cleanups.push(
            timers.after(STRAY_PIPE_GRACE_MS, () => {
              signalGroup(child, "SIGKILL");
              child.stdout?.destroy();
              child.stderr?.destroy();
            }),
          );
        });
        child.on("close", (code, signal) => {
          finish({ kind: "exited", exitCode: code, signal, cancelled, timedOut });
        });
      });
    },
  };
}

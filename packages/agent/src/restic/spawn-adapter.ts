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
import { createLineSplitter } from "./line-splitter.js";
import type { OutputStream, ProcessResult, ProcessSpec, ResticRunner } from "./runner.js";

export const DEFAULT_KILL_GRACE_MS = 10_000;
/** After the leader exits, stray group members holding its pipes get this long before SIGKILL. */
const STRAY_PIPE_GRACE_MS = 2_000;

export interface SpawnRunnerOptions {
  killGraceMs?: number;
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
          const term = setTimeout(() => signalGroup(child, "SIGTERM"), killGraceMs / 2);
          const kill = setTimeout(() => signalGroup(child, "SIGKILL"), killGraceMs);
          cleanups.push(() => {
            clearTimeout(term);
            clearTimeout(kill);
          });
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
          const timer = setTimeout(() => {
            timedOut = true;
            terminate();
          }, spec.timeoutMs);
          cleanups.push(() => clearTimeout(timer));
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
          const stray = setTimeout(() => {
            signalGroup(child, "SIGKILL");
            child.stdout?.destroy();
            child.stderr?.destroy();
          }, STRAY_PIPE_GRACE_MS);
          cleanups.push(() => clearTimeout(stray));
        });
        child.on("close", (code, signal) => {
          finish({ kind: "exited", exitCode: code, signal, cancelled, timedOut });
        });
      });
    },
  };
}

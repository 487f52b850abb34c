/**
 * @module restore-helper/helper-runner
 * The agent's side of the restore helper: a ResticRunner that hands the process spec to the helper
 * over its Unix socket instead of spawning restic itself. restic.ts has already built argv and
 * environment, and scrubs every line this runner hands back, exactly as for a local process.
 * Aborting (cancel) or the timeout closes the connection, which makes the helper end restic.
 */

import { connect } from "node:net";
import { createLineSplitter } from "../restic/line-splitter.js";
import type { ProcessResult, ProcessSpec, ResticRunner } from "../restic/runner.js";
import { type CancelTimer, systemTimers, type Timers } from "../time/timers.js";
import {
  encodeFrame,
  HELPER_ENV_NAMES,
  HELPER_WIRE_VERSION,
  type HelperRequest,
  parseFrame,
} from "./helper-wire.js";

/** The socket the installer's `fleetback-agent-restore.socket` listens on. */
export const DEFAULT_RESTORE_SOCKET = "/run/fleetback-agent-restore.sock";

export function createHelperRunner(socketPath: string, timers: Timers = systemTimers): ResticRunner {
  return {
    run(spec: ProcessSpec): Promise<ProcessResult> {
      return new Promise((resolve) => {
        const env: Record<string, string> = {};
        for (const name of HELPER_ENV_NAMES) {
          const value = spec.env[name];
          if (value !== undefined) {
            env[name] = value;
          }
        }
        const request: HelperRequest = {
          v: HELPER_WIRE_VERSION,
          args: [...spec.args],
          env: env as HelperRequest["env"],
          ...(spec.maxLineLength === undefined ? {} : { max_line_length: Math.max(80, spec.maxLineLength) }),
          ...(spec.restoreOrder === undefined ? {} : { order: spec.restoreOrder }),
        };
        let settled = false;
        let cancelled = false;
        let timedOut = false;
        let cancelTimeout: CancelTimer | undefined;
        const socket = connect(socketPath);
        const finish = (result: ProcessResult) => {
          if (settled) {
            return;
          }
          settled = true;
          cancelTimeout?.();
          spec.signal?.removeEventListener("abort", onAbort);
          socket.destroy();
          resolve(result);
        };
        const onAbort = () => {
          cancelled = true;
          // Closing the connection is the cancel: the helper stops restic's process group.
          finish({ kind: "exited", exitCode: null, signal: "SIGINT", cancelled, timedOut });
        };
        if (spec.signal?.aborted) {
          onAbort();
          return;
        }
        spec.signal?.addEventListener("abort", onAbort, { once: true });
        if (spec.timeoutMs !== undefined) {
          cancelTimeout = timers.after(spec.timeoutMs, () => {
            timedOut = true;
            finish({ kind: "exited", exitCode: null, signal: "SIGINT", cancelled, timedOut });
          });
        }
        const splitter = createLineSplitter((line) => {
          const frame = parseFrame(line);
          if (frame === undefined) {
            const message = "the restore helper sent a frame it should not";
            finish({ kind: "spawn_failed", missing: false, message, error: message });
          } else if (frame.t === "line") {
            spec.onLine({ stream: frame.s, text: frame.x });
          } else if (frame.t === "exit") {
            finish({ kind: "exited", exitCode: frame.code, signal: frame.signal, cancelled, timedOut });
          } else {
            const message = `restore helper: ${frame.message}`;
            finish({ kind: "spawn_failed", missing: frame.missing === true, message, error: message });
          }
        }, 256 * 1024);
        socket.on("connect", () => socket.write(encodeFrame(request)));
        socket.on("data", (chunk: Buffer) => splitter.push(chunk));
        const failWith = (message: string) =>
          finish({ kind: "spawn_failed", missing: false, message, error: message });
        socket.on("error", (error: NodeJS.ErrnoException) => {
          failWith(
            error.code === "ENOENT" || error.code === "ECONNREFUSED"
              ? `the restore helper does not answer at ${socketPath}: enable it with systemctl enable --now fleetback-agent-restore.socket (re-running the installer does this)`
              : `restore helper: ${error.message}`,
          );
        });
        socket.on("close", () => {
          splitter.end();
          failWith("the restore helper closed the connection before restic ended");
        });
      });
    },
  };
}

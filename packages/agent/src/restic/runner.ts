/**
 * @module restic/runner
 * The port every restic invocation goes through. Adapters: `createSpawnRunner` (a real child
 * process in its own process group) and `createReplayRunner` (recorded real output from
 * testdata/restic, for parser and job tests). Adapters emit raw lines; `createRestic`
 * (restic.ts) wraps them so that nothing unscrubbed leaves the runner layer.
 */
import type { RestoreOrder } from "@fleetback/protocol";

export type OutputStream = "stdout" | "stderr";

export interface OutputLine {
  stream: OutputStream;
  text: string;
}

/** One process to run. Nothing secret is ever in `args`: credentials travel in `env`. */
export interface ProcessSpec {
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  /** Working directory; default: the agent's own. */
  cwd?: string;
  onLine: (line: OutputLine) => void;
  /**
   * Takes stdout as raw bytes instead of lines (`restic dump`): called once with the stream, which
   * the caller reads, pauses and resumes; `onLine` then only sees stderr.
   */
  rawStdout?: (stdout: NodeJS.ReadableStream) => void;
  /** Aborting stops the whole process group: SIGINT, SIGTERM, then SIGKILL after the grace period. */
  signal?: AbortSignal;
  /** Same as an abort, but the result says `timedOut`. */
  timeoutMs?: number;
  /** Longer lines are truncated with a marker (see line-splitter.ts). */
  maxLineLength?: number;
  /** The server's signed order of a restore: only the restore helper's runner reads it. */
  restoreOrder?: RestoreOrder;
}

export type ProcessResult =
  | {
      kind: "exited";
      /** null when the process was ended by a signal. */
      exitCode: number | null;
      signal: string | null;
      cancelled: boolean;
      timedOut: boolean;
    }
  | {
      kind: "spawn_failed";
      /** The binary does not exist (ENOENT): restic is not installed or FLEETBACK_RESTIC is wrong. */
      missing: boolean;
      message: string;
      /** A whole sentence for the job when the cause is not restic itself (the restore helper). */
      error?: string;
    };

export interface ResticRunner {
  run(spec: ProcessSpec): Promise<ProcessResult>;
}

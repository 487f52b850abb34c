/**
 * @module restic/replay-adapter
 * The fake ResticRunner: replays output that real restic printed, as recorded by
 * scripts/record-restic-fixtures.mjs under
 * testdata/restic/<version>/<backend>/<name>.{cmd,stdout,stderr,exit}. Output is fed in
 * small odd-sized chunks through the same line splitter as the spawn adapter, so parsers see
 * lines split across reads exactly as they would with a live process.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createLineSplitter } from "./line-splitter.js";
import type { OutputStream, ProcessResult, ProcessSpec, ResticRunner } from "./runner.js";

export interface Recording {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** Reads `<dir>/<name>.{stdout,stderr,exit}`; `dir` is e.g. `.../testdata/restic/0.18.0/local`. */
export function loadRecording(dir: string, name: string): Recording {
  const read = (extension: string) => readFileSync(join(dir, `${name}.${extension}`), "utf8");
  return {
    stdout: read("stdout"),
    stderr: read("stderr"),
    exitCode: Number.parseInt(read("exit").trim(), 10),
  };
}

export interface ReplayRunner extends ResticRunner {
  /** Every spec the runner was asked to run, for assertions on argv and environment. */
  readonly calls: ProcessSpec[];
}

export interface ReplayOptions {
  /** Bytes per chunk; odd by default so that lines and UTF-8 sequences are split. */
  chunkSize?: number;
}

/** `recordings` is one recording for every call, or a function choosing one per call. */
export function createReplayRunner(
  recordings: Recording | ((spec: ProcessSpec) => Recording),
  options: ReplayOptions = {},
): ReplayRunner {
  const chunkSize = options.chunkSize ?? 7;
  const calls: ProcessSpec[] = [];
  const pick = typeof recordings === "function" ? recordings : () => recordings;

  const replay = (spec: ProcessSpec, stream: OutputStream, text: string) => {
    const splitter = createLineSplitter((line) => spec.onLine({ stream, text: line }), spec.maxLineLength);
    const bytes = Buffer.from(text, "utf8");
    for (let offset = 0; offset < bytes.length; offset += chunkSize) {
      splitter.push(bytes.subarray(offset, offset + chunkSize));
    }
    splitter.end();
  };

  return {
    calls,
    async run(spec: ProcessSpec): Promise<ProcessResult> {
      calls.push(spec);
      const recording = pick(spec);
      // Asynchronous like a real process: callers must not rely on synchronous completion.
      await new Promise((resolve) => setImmediate(resolve));
      if (spec.signal?.aborted) {
        return { kind: "exited", exitCode: null, signal: "SIGTERM", cancelled: true, timedOut: false };
      }
      replay(spec, "stdout", recording.stdout);
      replay(spec, "stderr", recording.stderr);
      return {
        kind: "exited",
        exitCode: recording.exitCode,
        signal: null,
        cancelled: false,
        timedOut: false,
      };
    },
  };
}

/**
 * @module restic/error-collector
 * Picks a short error text from a restic process's output:
 * restic 0.18 with --json prints `{"message_type":"exit_error",...}` on stderr, older versions and
 * plain-text runs print `Fatal: ...`. Some failures print neither: restic 0.14 giving up on a delete
 * prints the error and then a Go stack trace (as recorded in error-collector.test.ts), whose
 * last line `runtime/asm_amd64.s:1594` was the job's error (issue 31). Trace lines are never the
 * error.
 */

/**
 * Lines that state the failure itself. A locked repository prints no `Fatal:` line, only four
 * lines starting with `unable to create lock` (testdata/restic `err-locked-*`); the last of them is
 * advice.
 */
const FATAL_PREFIXES = ["Fatal:", "unable to create lock"];

/**
 * A source position of a Go stack trace (`\truntime/asm_amd64.s:1594`, `\t/src/x.go:12 +0x1d`).
 * The line before each one is the frame's function (`main.deleteFiles.func2`), so seeing one also
 * rules that line out.
 */
const GO_SOURCE_POSITION = /^\s+\S+\.(?:go|s):\d+(?: \+0x[0-9a-f]+)?$/;

/** The header of a goroutine's trace in a Go panic: `goroutine 1 [running]:`. */
const GO_GOROUTINE = /^goroutine \d+ \[[^\]]*\]:$/;

/** Collects the stderr text that best explains a failure. */
export interface ErrorCollector {
  observe(stream: string, text: string): void;
  best(): string | undefined;
}

export function createErrorCollector(): ErrorCollector {
  let exitError: string | undefined;
  let fatal: string | undefined;
  /** The last line known to be no part of a stack trace. */
  let last: string | undefined;
  /** The newest line: a frame's function if a source position follows it. */
  let newest: string | undefined;
  return {
    observe(stream, text) {
      if (stream !== "stderr" || text.trim() === "") {
        return;
      }
      if (text.startsWith("{")) {
        try {
          const parsed: unknown = JSON.parse(text);
          if (
            parsed !== null &&
            typeof parsed === "object" &&
            "message_type" in parsed &&
            parsed.message_type === "exit_error" &&
            "message" in parsed &&
            typeof parsed.message === "string"
          ) {
            exitError = parsed.message.split("\n")[0];
            return;
          }
        } catch {
          // Not JSON after all: treat it as text.
        }
      }
      if (GO_SOURCE_POSITION.test(text)) {
        newest = undefined;
        return;
      }
      if (GO_GOROUTINE.test(text)) {
        last = newest ?? last;
        newest = undefined;
        return;
      }
      if (fatal === undefined && FATAL_PREFIXES.some((prefix) => text.startsWith(prefix))) {
        fatal = text;
      }
      last = newest ?? last;
      newest = text;
    },
    best: () => exitError ?? fatal ?? newest ?? last,
  };
}

/**
 * @module job-page/log-render
 * Job log lines as people read them. The agent forwards some restic output as restic printed it:
 * JSON lines of `restore --json -vv`, `diff --json`, `init --json` and `forget --json`
 * (testdata/restic), and plain stderr such as 0.18's `Stat(<config/>) returned error, retrying
 * after 2.3s: …` while a repository cannot be reached. Each line becomes one sentence; a line
 * whose sentence differs from what restic printed keeps that in `raw`, which the page shows
 * behind a toggle. Terminal control codes are removed here too, for lines stored by agents that
 * still sent them. The sentences come from the protocol package, which the agent words its own
 * lines with too.
 */
import { describeResticLine, stripTerminalCodes } from "@fleetback/protocol";

export interface RenderedLogLine {
  /** What the page shows. */
  text: string;
  /** The line as the agent sent it, when `text` says it differently. */
  raw?: string;
  /** restic is retrying a repository request that failed (a dead or flaky repository). */
  retry: boolean;
}

/** restic's backend retry line, 0.14 to 0.18: `Load(<data/1a2b…>, 0, 0) returned error, retrying after 1.5s: …`. */
export const RETRY_LINE = /\) returned error, retrying after \S+?:/;
/** The SQL LIKE pattern that finds the same lines in the stored log. */
export const RETRY_LIKE = "%) returned error, retrying after %";

export function renderLogLine(line: string): RenderedLogLine {
  const clean = stripTerminalCodes(line);
  const retry = RETRY_LINE.test(clean);
  const text = describeResticLine(clean);
  if (text === undefined) {
    // Control codes alone are noise, not something anyone needs to see "raw".
    return { text: clean, retry };
  }
  return { text, raw: line, retry };
}

import type { LogStreamName } from "@fleetback/protocol";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import { createErrorCollector } from "../restic/error-collector.js";
import type { ProgressState } from "./job-types.js";
import { createProgressThrottle } from "./progress-throttle.js";
import { createTextOutputHandler, progressLinePercent } from "./text-output.js";

/**
 * Captured from a real run, not made up: restic 0.14.0 `check --read-data` of a 200 MB local
 * repository with RESTIC_PROGRESS_FPS=1 and stdout a pipe (as the agent runs it), 2026-11-22.
 * testdata/restic only holds runs too short to print anything below 100%.
 */
const CHECK_READ_DATA_0_14 = `using temporary cache in /tmp/rx/cache/restic-check-cache-2178981941
create exclusive lock for repository
load indexes
check all packs
check snapshots, trees and blobs
[0:00] 100.00%  1 / 1 snapshots

read all data
[0:01] 0.00%  0 / 13 packs
[0:02] 23.08%  3 / 13 packs
[0:03] 30.77%  4 / 13 packs
[0:04] 53.85%  7 / 13 packs
[0:05] 53.85%  7 / 13 packs
[0:06] 69.23%  9 / 13 packs
[0:07] 76.92%  10 / 13 packs
[0:08] 84.62%  11 / 13 packs
[0:09] 92.31%  12 / 13 packs
[0:09] 100.00%  13 / 13 packs

no errors were found`;

describe("progressLinePercent", () => {
  it("reads restic's text progress lines and nothing else", () => {
    expect(progressLinePercent("[0:02] 23.08%  3 / 13 packs")).toBeCloseTo(0.2308);
    expect(progressLinePercent("[0:00] 100.00%  6 / 6 snapshots")).toBe(1);
    expect(progressLinePercent("read 5.0% of data packs")).toBeUndefined();
    expect(progressLinePercent("no errors were found")).toBeUndefined();
  });
});

describe("createTextOutputHandler", () => {
  it("logs every line but the unfinished progress lines, which become throttled job.progress", () => {
    const timers = createManualTimers();
    const progress: ProgressState[] = [];
    const lines: { stream: LogStreamName; line: string }[] = [];
    const throttle = createProgressThrottle((state) => progress.push(state), timers, timers.clock);
    const handle = createTextOutputHandler(
      {
        command: {
          job_id: "01M807SKJ8H7QEZZS1A0ZWSK9T",
          kind: "check",
          requires_admin_creds: false,
          check: {},
        },
        signal: new AbortController().signal,
        log: (stream, line) => lines.push({ stream, line }),
        progress: () => {},
      },
      throttle,
      createErrorCollector(),
    );
    for (const text of CHECK_READ_DATA_0_14.split("\n")) {
      handle({ stream: "stdout", text });
      timers.advance(text.startsWith("[") ? 1_000 : 0);
    }
    throttle.flush();
    const logged = lines.map((entry) => entry.line);
    expect(logged).toContain("[0:00] 100.00%  1 / 1 snapshots");
    expect(logged).toContain("[0:09] 100.00%  13 / 13 packs");
    expect(logged.some((line) => line.includes("23.08%"))).toBe(false);
    expect(logged).toContain("no errors were found");
    expect(progress.map((state) => Math.round(state.percent_done * 10_000) / 10_000)).toEqual([
      1, 0, 0.2308, 0.3077, 0.5385, 0.5385, 0.6923, 0.7692, 0.8462, 0.9231, 1,
    ]);
    expect(progress[0]).toEqual({ percent_done: 1, files_done: 0, bytes_done: 0 });
  });
});

/**
 * The job log's human lines, from restic's recorded output in testdata/restic (0.14 and 0.18, made
 * by scripts/record-restic-fixtures.mjs), plus the retry lines 0.18 prints for a dead repository.
 */
import { describe, expect, it } from "vitest";
import { recordedOutput } from "../testing/restic-binaries.js";
import { RETRY_LINE, renderLogLine } from "./log-render.js";

const lines = (version: string, name: string, stream = "stdout") =>
  recordedOutput(version, `${name}.${stream}`)
    .split("\n")
    .filter((line) => line !== "");

describe("renderLogLine on recorded restic output", () => {
  it("restore -vv --json (0.18): one sentence per restored item and a summary, each with its raw JSON", () => {
    const rendered = lines("0.18.0", "restore-include-vv-json").map(renderLogLine);
    expect(rendered[0]).toEqual({
      text: "restored /tmp/fleetback-fixtures/src/tree/docs/notes.md (15 B)",
      raw: '{"message_type":"verbose_status","action":"restored","item":"/tmp/fleetback-fixtures/src/tree/docs/notes.md","size":15}',
      retry: false,
    });
    expect(rendered.at(-1)?.text).toBe("restored 9 files, 38 B of 38 B; 5 files in the selection");
    for (const line of rendered) {
      expect(line.text).not.toContain("{");
      expect(line.raw).toMatch(/^\{"message_type":/);
    }
  });

  it("restore --json status lines (0.18, 5,000 files) read as percent, files and bytes", () => {
    const rendered = lines("0.18.0", "restore-big-json").map(renderLogLine);
    expect(rendered).toContainEqual(
      expect.objectContaining({ text: "100.0 %, 5,000 of 5,001 files, 141.6 KiB of 141.6 KiB" }),
    );
    expect(rendered.at(-1)?.text).toBe(
      "restored 5,006 files, 141.6 KiB of 141.6 KiB; 5,001 files in the selection",
    );
  });

  it.each(["0.18.0", "0.14.0"])("diff --json (%s): + and - paths and the statistics", (version) => {
    const rendered = lines(version, "diff").map(renderLogLine);
    const texts = rendered.map((line) => line.text);
    expect(texts).toContain("+ /tmp/fleetback-fixtures/src/tree/docs/new.txt (added)");
    expect(texts).toContain("- /tmp/fleetback-fixtures/src/tree/docs/notes.md (removed)");
    expect(texts).toContain("M /tmp/fleetback-fixtures/src/tree/docs/readme.txt (content changed)");
    expect(texts.at(-1)).toMatch(
      /^2 files changed; added 1 file, 0 dirs, [\d.]+ KiB; removed 1 file, 0 dirs, [\d.]+ KiB$/,
    );
    expect(rendered.every((line) => line.raw?.startsWith('{"message_type":'))).toBe(true);
  });

  it.each(["0.18.0", "0.14.0"])("forget --json (%s): the array as counts", (version) => {
    const [line] = lines(version, "forget-tag");
    expect(renderLogLine(line ?? "")).toEqual({
      text: "forget result: 1 group, 1 snapshot kept, 1 snapshot removed",
      raw: line,
      retry: false,
    });
  });

  it("init --json (0.18) and 0.18's exit_error", () => {
    const [init] = lines("0.18.0", "init-json");
    expect(renderLogLine(init ?? "").text).toMatch(
      /^created restic repository [0-9a-f]{10} at \/tmp\/fleetback-fixtures\//,
    );
    const [wrong] = lines("0.18.0", "err-wrong-password-json", "stderr");
    expect(renderLogLine(wrong ?? "").text).toBe("Fatal: wrong password or no key found");
  });

  it("text output (0.14 restore, check) stays as it is, without a raw copy", () => {
    for (const line of [...lines("0.14.0", "restore-include-text"), ...lines("0.18.0", "check")]) {
      expect(renderLogLine(line)).toEqual({ text: line, retry: false });
    }
  });
});

describe("renderLogLine on terminal codes and retries", () => {
  it("removes the clear-line code restic prints when it is stopped", () => {
    expect(renderLogLine("\x1b[2Ksignal terminated received, cleaning up")).toEqual({
      text: "signal terminated received, cleaning up",
      retry: false,
    });
    expect(renderLogLine("[2K").text).toBe("[2K");
  });

  it("flags restic's backend retry lines (0.18 Stat, 0.14 Load)", () => {
    const stat =
      'Stat(<config/>) returned error, retrying after 2.325488529s: Head "http://:***@127.0.0.1:1/repo/config": dial tcp 127.0.0.1:1: connect: connection refused';
    const load =
      "Load(<data/1a2b3c4d5e>, 0, 0) returned error, retrying after 720.5ms: unexpected HTTP response (500)";
    expect(renderLogLine(stat)).toEqual({ text: stat, retry: true });
    expect(renderLogLine(load).retry).toBe(true);
    expect(RETRY_LINE.test("error: something returned error, retrying")).toBe(false);
  });
});

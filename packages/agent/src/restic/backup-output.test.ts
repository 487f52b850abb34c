import { describeBackupSummary, renderStderrLine } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { fixture } from "../testing/job-run.js";
import { parseBackupLine } from "./backup-output.js";

describe("parseBackupLine", () => {
  it("clamps percent and counts, and takes the first current file", () => {
    expect(
      parseBackupLine(
        '{"message_type":"status","percent_done":1.5,"files_done":-1,"bytes_done":3.7,"seconds_remaining":9223372036854775808,"current_files":["/a","/b"]}',
      ),
    ).toEqual({
      kind: "status",
      progress: {
        percent_done: 1,
        files_done: 0,
        bytes_done: 3,
        current_file: "/a",
      },
    });
    expect(
      parseBackupLine('{"message_type":"status","percent_done":0.5,"files_done":2,"seconds_remaining":12}'),
    ).toMatchObject({ kind: "status", progress: { eta_seconds: 12 } });
  });

  it("sends no progress for a status line that has measured nothing yet", () => {
    // 0.14's first line, and all it prints for a short backup; 0.18 leaves out zeros the same way.
    expect(
      parseBackupLine('{"message_type":"status","percent_done":0,"total_files":1,"total_bytes":9}'),
    ).toEqual({ kind: "unmeasured" });
    // One big file half read: no file done yet, but bytes are measured.
    expect(
      parseBackupLine('{"message_type":"status","percent_done":0.5,"total_files":1,"bytes_done":4}'),
    ).toMatchObject({ kind: "status", progress: { files_done: 0, files_total: 1, bytes_done: 4 } });
  });

  it("treats 0.14's scan_finished 'status' line, verbose lines and text as other lines", () => {
    expect(parseBackupLine('{"message_type":"status","action":"scan_finished","item":""}')).toEqual({
      kind: "other",
    });
    expect(parseBackupLine('{"message_type":"verbose_status","action":"new","item":"/a"}')).toEqual({
      kind: "other",
    });
    expect(parseBackupLine("using parent snapshot 1234abcd")).toEqual({ kind: "other" });
  });

  it("passes the summary through without message_type", () => {
    expect(
      parseBackupLine('{"message_type":"summary","files_new":1,"snapshot_id":"0123abcd","dry_run":true}'),
    ).toEqual({
      kind: "summary",
      summary: { files_new: 1, snapshot_id: "0123abcd", dry_run: true },
    });
  });
});

describe("renderStderrLine", () => {
  it("renders 0.18 and 0.14 error lines and exit_error as text", () => {
    expect(
      renderStderrLine(
        '{"message_type":"error","error":{"message":"failed to save /x: denied"},"during":"archival","item":"/x"}',
      ),
    ).toBe("error during archival of /x: failed to save /x: denied");
    expect(
      renderStderrLine(
        '{"message_type":"error","error":{"Op":"read","Path":"/proc/self/mem","Err":5},"during":"archival","item":"/proc/self/mem"}',
      ),
    ).toBe("error during archival of /proc/self/mem: read /proc/self/mem (errno 5)");
    expect(
      renderStderrLine(
        '{"message_type":"exit_error","code":10,"message":"Fatal: repository does not exist\\nIs there a repository?\\n"}',
      ),
    ).toBe("Fatal: repository does not exist / Is there a repository?");
    expect(renderStderrLine("plain text")).toBe("plain text");
  });
});

describe("describeBackupSummary", () => {
  it("turns restic 0.18's summary (captured) into one readable log line", () => {
    const line = fixture("0.18.0", "backup-exclude", "rest")
      .stdout.split("\n")
      .find((text) => text.includes('"message_type":"summary"'));
    const parsed = parseBackupLine(line ?? "");
    if (parsed.kind !== "summary") {
      throw new Error("fixture has no summary line");
    }
    expect(describeBackupSummary(parsed.summary)).toMatch(
      /^snapshot [0-9a-f]{8} saved: files \d+ new, \d+ changed, \d+ unmodified; [\d.]+ (B|KiB|MiB) added; processed \d+ files, [\d.]+ (B|KiB|MiB) in [\d.]+ s$/,
    );
    expect(describeBackupSummary({})).toBe(
      "backup finished without a new snapshot: files 0 new, 0 changed, 0 unmodified; 0 B added; processed 0 files, 0 B",
    );
  });
});

/**
 * @module restic-text.test
 * The sentences both the agent's log lines and the server's job page use, on lines restic 0.14
 * and 0.18 printed (testdata/restic), so the two sides cannot drift apart again.
 */
import { describe, expect, it } from "vitest";
import {
  describeBackupSummary,
  describeForget,
  describeRepoStats,
  describeResticLine,
  renderStderrLine,
  resticBytes,
} from "./restic-text.js";

const summary018 =
  '{"message_type":"summary","files_new":7,"files_changed":0,"files_unmodified":0,"dirs_new":9,"data_added":71271,"total_files_processed":7,"total_bytes_processed":65598,"total_duration":0.722569474,"snapshot_id":"d2bec9aed4bf51d16cd0a438317dff948b93c57671d2023c1b7c6e9b9b4e97e7"}';
const error014 =
  '{"message_type":"error","error":{"Op":"read","Path":"/proc/self/mem","Err":5},"during":"archival","item":"/proc/self/mem"}';

describe("restic-text", () => {
  it("a backup summary reads the same whether the agent logs it or the page renders restic's line", () => {
    const { message_type: _type, ...summary } = JSON.parse(summary018) as Record<string, unknown>;
    const sentence =
      "snapshot d2bec9ae saved: files 7 new, 0 changed, 0 unmodified; 69.6 KiB added; processed 7 files, 64.1 KiB in 0.7 s";
    expect(describeBackupSummary(summary)).toBe(sentence);
    expect(describeResticLine(summary018)).toBe(sentence);
  });

  it("0.14's serialised Go errors and 0.18's exit_error become text on stderr and on the page", () => {
    const sentence = "error during archival of /proc/self/mem: read /proc/self/mem (errno 5)";
    expect(renderStderrLine(error014)).toBe(sentence);
    expect(describeResticLine(error014)).toBe(sentence);
    expect(renderStderrLine('{"message_type":"exit_error","code":1,"message":"Fatal: a\\nb\\n"}')).toBe(
      "Fatal: a / b",
    );
  });

  it("stderr keeps what is not an error message; the page gets no sentence for it", () => {
    expect(renderStderrLine('{"message_type":"status","percent_done":0.5}')).toBe(
      '{"message_type":"status","percent_done":0.5}',
    );
    expect(renderStderrLine("{not json")).toBe("{not json");
    expect(describeResticLine("plain text")).toBeUndefined();
    expect(describeResticLine('{"message_type":"new_in_0.19"}')).toBeUndefined();
  });

  it("forget, stats and sizes", () => {
    expect(describeResticLine('[{"keep":[{}],"remove":null}]')).toBe(
      "forget result: 1 group, 1 snapshot kept, 0 snapshots removed",
    );
    expect(describeForget("daily", { kept: 3, removed: 1, removedIds: ["ab12cd34"] })).toBe(
      "forget tag daily: removed 1 snapshot (ab12cd34), kept 3",
    );
    expect(describeRepoStats({ snapshot_count: 2, raw_size_bytes: 10 })).toBe("2 snapshots, 10 bytes stored");
    expect([resticBytes(15), resticBytes(1536), resticBytes(145_000), resticBytes(-1)]).toEqual([
      "15 B",
      "1.50 KiB",
      "141.6 KiB",
      "–",
    ]);
  });
});

/**
 * Job summaries as labelled rows, from the summaries restic printed in testdata/restic (the agent
 * forwards backup's and restore's summary message without `message_type`, and diff's statistics
 * with its own change counts).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { recordedOutput, repoRoot } from "../testing/restic-binaries.js";
import { summaryRows } from "./summary-render.js";

/** The last JSON line of a recording, without message_type: what job.finished.summary carries. */
function recorded(version: string, name: string): Record<string, unknown> {
  const text = recordedOutput(version, `${name}.stdout`);
  const last = text.trim().split("\n").at(-1) ?? "{}";
  const { message_type: _type, ...summary } = JSON.parse(last) as Record<string, unknown>;
  return summary;
}

const byKey = (rows: ReturnType<typeof summaryRows>) => Object.fromEntries(rows.map((row) => [row.key, row]));

describe("summaryRows", () => {
  it.each(["0.18.0", "0.14.0"])("labels and formats restic %s's backup summary", (version) => {
    const rows = byKey(summaryRows(recorded(version, "backup-1")));
    expect(rows.data_added?.label).toBe("Data added");
    expect(rows.data_added?.value).toMatch(/^\d+\.\d KiB$/);
    expect(rows.files_new).toEqual({ key: "files_new", label: "New files", value: "7" });
    expect(rows.total_bytes_processed).toEqual({
      key: "total_bytes_processed",
      label: "Data processed",
      value: "64.1 KiB",
    });
    expect(rows.total_duration?.value).toMatch(/^\d+\.\d s$/);
    expect(rows.snapshot_id?.value).toMatch(/^[0-9a-f]{8}$/);
    for (const row of Object.values(rows)) {
      expect(row.label, row.key).not.toBe(row.key);
    }
  });

  it("formats restic 0.18's restore summary", () => {
    const rows = byKey(summaryRows(recorded("0.18.0", "restore-big-json")));
    expect(rows.files_restored).toEqual({
      key: "files_restored",
      label: "Files and folders restored",
      value: "5,006",
    });
    expect(rows.bytes_restored?.value).toBe("141.6 KiB");
  });

  it("formats diff statistics and the agent's change counts", () => {
    const statistics = recorded("0.18.0", "diff");
    const rows = byKey(
      summaryRows({ ...statistics, changes: { added: 1, removed: 1, modified: 2, other: 0 } }),
    );
    expect(rows.added?.value).toMatch(/^1 file, 0 folders, [\d.]+ KiB$/);
    expect(rows.changes?.value).toBe("1 added, 1 removed, 2 modified, 0 other");
    expect(rows.source_snapshot?.value).toMatch(/^[0-9a-f]{8}$/);
  });

  it("labels the golden copy summary (protocol 8)", () => {
    const frame = JSON.parse(
      readFileSync(
        join(repoRoot(), "packages", "protocol", "fixtures", "agent-to-server", "job.finished.copy.json"),
        "utf8",
      ),
    ) as { payload: { summary: Record<string, unknown> } };
    const rows = byKey(summaryRows(frame.payload.summary));
    expect(rows.initialised?.value).toBe("yes");
    expect(rows.mirrored).toEqual({ key: "mirrored", label: "Of those, in the mirror now", value: "2" });
    expect(rows.missing?.value).toBe("none");
    expect(rows.mirror_latest_time?.label).toBe("Newest snapshot in the mirror");
    // A time row carries its moment for the page's one time format, not text of its own.
    const latest = rows.mirror_latest_time;
    expect(latest?.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/);
    expect(latest?.value).toBe(latest?.at);
    for (const row of Object.values(rows)) {
      expect(row.label, row.key).not.toBe(row.key);
    }
  });

  it("gives times as ISO with `at`, and unreadable times raw", () => {
    expect(summaryRows({ mirror_latest_time: "2026-11-21T10:00:00.123456789+01:00" })).toEqual([
      {
        key: "mirror_latest_time",
        label: "Newest snapshot in the mirror",
        value: "2026-11-21T09:00:00.123Z",
        at: "2026-11-21T09:00:00.123Z",
      },
    ]);
    expect(summaryRows({ mirror_latest_time: "yesterday" })).toEqual([
      { key: "mirror_latest_time", label: "mirror_latest_time", value: "yesterday" },
    ]);
  });

  it("keeps keys it does not know, and values of an unexpected type, raw", () => {
    expect(summaryRows({ shiny_new_count: 3, data_added: "lots", nested: { a: 1 } })).toEqual([
      { key: "shiny_new_count", label: "shiny_new_count", value: "3" },
      { key: "data_added", label: "data_added", value: "lots" },
      { key: "nested", label: "nested", value: '{"a":1}' },
    ]);
    expect(summaryRows(null)).toEqual([]);
  });
});

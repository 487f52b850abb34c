import { describe, expect, it } from "vitest";
import { backupFactsOf, filesRemovedSince } from "./backup-facts.js";

const AT = new Date("2026-11-28T02:36:55Z");

// Verbatim but for message_type, which the agent drops: a second backup after one file was
// appended to, one added and one deleted.
const RESTIC_014 = {
  files_new: 1,
  files_changed: 1,
  files_unmodified: 198,
  dirs_new: 0,
  dirs_changed: 4,
  dirs_unmodified: 0,
  data_blobs: 2,
  tree_blobs: 5,
  data_added: 85112,
  total_files_processed: 200,
  total_bytes_processed: 2776905,
  total_duration: 0.233343387,
  snapshot_id: "37fcfa1e",
};

const RESTIC_018 = {
  ...RESTIC_014,
  data_added: 85121,
  data_added_packed: 15130,
  total_duration: 0.740287636,
  backup_start: "2026-11-28T02:36:55.028461219Z",
  backup_end: "2026-11-28T02:36:55.768748855Z",
  snapshot_id: "86c116cffe99088fdf9d6cb66270b0dd2460c101bdf012008695cc550cfa90dd",
};

// `restic backup --force`: restic compares with no parent, so everything counts as new.
const FORCED = {
  files_new: 200,
  files_changed: 0,
  files_unmodified: 0,
  dirs_new: 4,
  dirs_changed: 0,
  dirs_unmodified: 0,
  data_added: 703,
  total_files_processed: 200,
  total_bytes_processed: 2776905,
};

describe("backupFactsOf", () => {
  it.each([
    ["0.14", RESTIC_014, 85112],
    ["0.18", RESTIC_018, 85121],
  ])("reads restic %s's summary", (_version, summary, bytesAdded) => {
    expect(backupFactsOf(summary, AT)).toEqual({
      filesNew: 1,
      filesChanged: 1,
      filesUnmodified: 198,
      totalFiles: 200,
      bytesAdded,
      totalBytes: 2776905,
      hadParent: true,
      at: AT,
    });
  });

  it("knows a backup restic made without a parent", () => {
    expect(backupFactsOf(FORCED, AT)?.hadParent).toBe(false);
  });

  it("sees the parent in the directories when every file was renamed away", () => {
    const renamed = { ...FORCED, dirs_new: 0, dirs_changed: 4, data_added: 2_700_000 };
    expect(backupFactsOf(renamed, AT)?.hadParent).toBe(true);
  });

  it.each([
    ["nothing", undefined],
    ["null", null],
    ["a list", [RESTIC_014]],
    ["a string", JSON.stringify(RESTIC_014)],
    ["a summary without data_added", { ...RESTIC_014, data_added: undefined }],
    ["a negative count", { ...RESTIC_014, files_changed: -1 }],
    ["an infinite size", { ...RESTIC_014, total_bytes_processed: Number.POSITIVE_INFINITY }],
    ["a count as text", { ...RESTIC_014, files_new: "1" }],
    ["a restore summary", { total_files: 3, files_restored: 3, total_bytes: 10, bytes_restored: 10 }],
  ])("refuses %s", (_name, summary) => {
    expect(backupFactsOf(summary, AT)).toBeUndefined();
  });

  it("refuses an invalid time", () => {
    expect(backupFactsOf(RESTIC_014, new Date(Number.NaN))).toBeUndefined();
  });
});

describe("filesRemovedSince", () => {
  const previous = backupFactsOf({ ...RESTIC_014, total_files_processed: 200 }, AT);
  const current = backupFactsOf({ ...RESTIC_014, files_changed: 3, files_unmodified: 190 }, AT);

  it("is the previous backup's files neither changed nor unmodified", () => {
    expect(previous && current && filesRemovedSince(previous, current)).toBe(7);
  });

  it("is unknown when restic compared with no parent", () => {
    const forced = backupFactsOf(FORCED, AT);
    expect(previous && forced && filesRemovedSince(previous, forced)).toBeUndefined();
  });
});

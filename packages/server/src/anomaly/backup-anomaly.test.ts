import { describe, expect, it } from "vitest";
import { type BackupFacts, backupFactsOf, filesRemoved, judgeBackup } from "./backup-anomaly.js";

const MiB = 1024 ** 2;

/** A steady group: 1,000 files, 4 GiB, ~2% changed and ~50 MiB added a day. */
function day(overrides: Partial<BackupFacts> = {}): BackupFacts {
  return {
    filesNew: 5,
    filesChanged: 20,
    filesUnmodified: 975,
    totalFiles: 1_000,
    bytesAdded: 50 * MiB,
    totalBytes: 4_096 * MiB,
    ...overrides,
  };
}
const history = [
  day(),
  day({ filesChanged: 30, bytesAdded: 80 * MiB }),
  day({ filesChanged: 10, bytesAdded: 20 * MiB }),
];

describe("a backup against its group's baseline", () => {
  it("leaves ordinary days alone: growth, a log rotation, a big but ordinary new file set", () => {
    expect(judgeBackup(day(), history).anomalous).toBe(false);
    expect(judgeBackup(day({ filesChanged: 120, bytesAdded: 200 * MiB }), history).anomalous).toBe(false);
    // 300 new files of photos: a lot of data, but nothing changed or went.
    expect(
      judgeBackup(
        day({ filesNew: 300, totalFiles: 1_300, bytesAdded: 900 * MiB, totalBytes: 5_000 * MiB }),
        history,
      ).anomalous,
    ).toBe(false);
  });

  it("never judges before the group has a history", () => {
    const encrypted = day({ filesChanged: 950, filesUnmodified: 45, bytesAdded: 4_000 * MiB });
    expect(judgeBackup(encrypted, history.slice(0, 2))).toEqual({ anomalous: false, reasons: [] });
  });

  it("flags most files rewritten with data that does not deduplicate", () => {
    const verdict = judgeBackup(
      day({ filesChanged: 950, filesUnmodified: 45, bytesAdded: 4_000 * MiB }),
      history,
    );
    expect(verdict.anomalous).toBe(true);
    expect(verdict.reasons).toEqual([
      "95% of the files changed (950 of 1000; usually 2%)",
      "3.9 GiB of new data, 80 times the usual 50.0 MiB",
    ]);
  });

  it("flags originals replaced by encrypted copies", () => {
    const replaced = day({ filesNew: 990, filesChanged: 0, filesUnmodified: 10, totalFiles: 1_000 });
    expect(filesRemoved(replaced, day())).toBe(990);
    expect(judgeBackup(replaced, history).reasons).toContain(
      "990 of the 1000 files are gone and 990 new ones came (originals replaced)",
    );
  });

  it("flags a source that lost half of its files or bytes", () => {
    const wiped = day({
      filesNew: 0,
      filesChanged: 0,
      filesUnmodified: 400,
      totalFiles: 400,
      bytesAdded: 0,
      totalBytes: 1_500 * MiB,
    });
    expect(judgeBackup(wiped, history).reasons).toEqual([
      "the source shrank from 1000 files (4.0 GiB) to 400 (1.5 GiB)",
    ]);
  });

  it("reads restic's summary and refuses what is not one", () => {
    expect(
      backupFactsOf({
        files_new: 1,
        files_changed: 2,
        files_unmodified: 3,
        total_files_processed: 6,
        data_added: 100,
        total_bytes_processed: 1_000,
        snapshot_id: "abc",
      }),
    ).toEqual({
      filesNew: 1,
      filesChanged: 2,
      filesUnmodified: 3,
      totalFiles: 6,
      bytesAdded: 100,
      totalBytes: 1_000,
    });
    expect(backupFactsOf(null)).toBeUndefined();
    expect(backupFactsOf({ files_new: -1 })).toBeUndefined();
    expect(backupFactsOf({ files_new: "1", files_changed: 0 })).toBeUndefined();
  });
});

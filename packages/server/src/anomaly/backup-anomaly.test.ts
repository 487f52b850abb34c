import { describe, expect, it } from "vitest";
import { judgeBackup } from "./backup-anomaly.js";
import type { BackupFacts } from "./backup-facts.js";

const DAY = 86_400_000;
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const START = Date.parse("2026-11-01T02:00:00Z");

function firstBackup(files: number, bytes: number): BackupFacts {
  return {
    filesNew: files,
    filesChanged: 0,
    filesUnmodified: 0,
    totalFiles: files,
    bytesAdded: bytes,
    totalBytes: bytes,
    hadParent: false,
    at: new Date(START),
  };
}

interface Change {
  changed?: number;
  added?: number;
  removed?: number;
  bytesAdded: number;
  /** Change of the source's size; bytesAdded when not given. */
  grew?: number;
  afterDays?: number;
}

/** The backup after `previous` that saw `change`, its counts kept consistent the way restic's are. */
function next(previous: BackupFacts, change: Change): BackupFacts {
  const { changed = 0, added = 0, removed = 0, bytesAdded, grew = bytesAdded, afterDays = 1 } = change;
  return {
    filesNew: added,
    filesChanged: changed,
    filesUnmodified: previous.totalFiles - changed - removed,
    totalFiles: previous.totalFiles - removed + added,
    bytesAdded,
    totalBytes: previous.totalBytes + grew,
    hadParent: true,
    at: new Date(previous.at.getTime() + afterDays * DAY),
  };
}

function lastOf(history: readonly BackupFacts[]): BackupFacts {
  const last = history.at(-1);
  if (last === undefined) {
    throw new Error("a history starts with a first backup");
  }
  return last;
}

/** A home directory backed up nightly: a first full backup, then days of a few dozen edits. */
function ordinaryWeek(days = 6): BackupFacts[] {
  const history = [firstBackup(10_000, 20 * GiB)];
  for (let day = 0; day < days; day += 1) {
    history.push(
      next(lastOf(history), { changed: 30 + day, added: 20, removed: 5, bytesAdded: (150 + 20 * day) * MiB }),
    );
  }
  return history;
}

function after(history: BackupFacts[], change: Change): BackupFacts {
  return next(lastOf(history), change);
}

describe("judgeBackup: ransomware", () => {
  it("flags most files rewritten in place with data that does not deduplicate", () => {
    const history = ordinaryWeek();
    const verdict = judgeBackup(after(history, { changed: 9_000, bytesAdded: 18 * GiB, grew: 0 }), history);
    expect(verdict.anomalous).toBe(true);
    expect(verdict.reasons).toEqual([
      "89% of the 10090 files of the previous backup changed or disappeared (9000 changed, 0 removed, 0 new; usual: under 1%)",
      "18.0 GiB of new data was stored (usual: 200.0 MiB)",
    ]);
  });

  it("flags originals deleted for new `.locked` files, the unmodified collapsing", () => {
    const history = ordinaryWeek();
    const verdict = judgeBackup(
      after(history, { added: 9_500, removed: 9_500, bytesAdded: 19 * GiB }),
      history,
    );
    expect(verdict.anomalous).toBe(true);
    expect(verdict.reasons[0]).toContain("(0 changed, 9500 removed, 9500 new;");
  });

  it("flags every file renamed away, though restic then reports none changed or unmodified", () => {
    const history = ordinaryWeek();
    const verdict = judgeBackup(
      after(history, { added: 10_090, removed: 10_090, bytesAdded: 20 * GiB }),
      history,
    );
    expect(verdict.reasons[0]).toMatch(/^100% of the 10090 files/);
  });

  it("flags lockers that encrypt only the head of each large file", () => {
    // 1000 disk images of 1 GiB: a rewritten first chunk each is 1.5 GiB, under 1% of the source.
    const history = [firstBackup(1_000, 1_000 * GiB)];
    for (let day = 0; day < 4; day += 1) {
      history.push(after(history, { changed: 10, bytesAdded: 200 * MiB }));
    }
    const verdict = judgeBackup(after(history, { changed: 950, bytesAdded: 1.5 * GiB, grew: 0 }), history);
    expect(verdict.anomalous).toBe(true);
  });
});

describe("judgeBackup: wipes", () => {
  it("flags most files gone", () => {
    const history = ordinaryWeek();
    const verdict = judgeBackup(
      after(history, { removed: 6_000, bytesAdded: MiB, grew: -12 * GiB }),
      history,
    );
    expect(verdict.reasons).toEqual([
      "the source shrank from 10090 files to 4090 (usual: 10045)",
      "the source shrank from 21.2 GiB to 9.17 GiB (usual: 20.5 GiB)",
    ]);
  });

  it("flags files emptied in place, which stores almost nothing new", () => {
    const history = ordinaryWeek();
    const verdict = judgeBackup(
      after(history, { changed: 9_000, bytesAdded: MiB, grew: -20 * GiB }),
      history,
    );
    expect(verdict.anomalous).toBe(true);
    expect(verdict.reasons).toHaveLength(1);
    expect(verdict.reasons[0]).toMatch(/^the source shrank from 21.2 GiB to 1.17 GiB/);
  });

  it("does not flag again once the smaller source is the previous backup", () => {
    const history = ordinaryWeek();
    history.push(after(history, { removed: 6_000, bytesAdded: MiB, grew: -12 * GiB }));
    expect(judgeBackup(after(history, { changed: 20, bytesAdded: 100 * MiB }), history).anomalous).toBe(
      false,
    );
  });

  it("does not count a handful of files in a tiny group", () => {
    const history = [firstBackup(12, 300_000)];
    for (let day = 0; day < 4; day += 1) {
      history.push(after(history, { changed: 1, bytesAdded: 4_000, grew: 0 }));
    }
    expect(
      judgeBackup(after(history, { removed: 8, bytesAdded: 0, grew: -200_000 }), history).anomalous,
    ).toBe(false);
  });
});

describe("judgeBackup: ordinary life", () => {
  it("does not judge a group's first backups", () => {
    const week = ordinaryWeek(2);
    expect(judgeBackup(firstBackup(10, 10), [])).toEqual({
      anomalous: false,
      reasons: [],
      baseline: undefined,
    });
    expect(judgeBackup(lastOf(week), week.slice(0, 2)).baseline).toBeUndefined();
    // A parentless history (`--force` every night) says nothing about change.
    const forced = [firstBackup(10, 10), firstBackup(10, 10), firstBackup(10, 10)];
    expect(judgeBackup(firstBackup(0, 0), forced).baseline).toBeUndefined();
  });

  it("judges from three earlier backups and stays quiet on daily growth", () => {
    const history = ordinaryWeek();
    for (let judged = 3; judged < history.length; judged += 1) {
      const verdict = judgeBackup(lastOf(history.slice(0, judged + 1)), history.slice(0, judged));
      expect(verdict.baseline).toBeDefined();
      expect(verdict.anomalous).toBe(false);
    }
  });

  it("stays quiet on a log rotation, every log changed but its content already stored", () => {
    const history = [firstBackup(10, 50 * MiB)];
    for (let day = 0; day < 4; day += 1) {
      history.push(after(history, { changed: 2, bytesAdded: 5 * MiB, grew: MiB }));
    }
    const rotated = after(history, { changed: 9, added: 1, removed: 1, bytesAdded: 6 * MiB, grew: -4 * MiB });
    expect(judgeBackup(rotated, history).anomalous).toBe(false);
  });

  it("stays quiet on a big import of new files", () => {
    const history = ordinaryWeek();
    const imported = after(history, { changed: 40, added: 25_000, bytesAdded: 60 * GiB });
    expect(judgeBackup(imported, history)).toMatchObject({ anomalous: false, reasons: [] });
  });

  it("stays quiet when most files are reread but their content deduplicates", () => {
    const history = ordinaryWeek();
    const touched = after(history, { changed: 10_090, bytesAdded: 40 * MiB, grew: 0 });
    expect(judgeBackup(touched, history).anomalous).toBe(false);
  });

  it("stays quiet on a backup restic made without a parent, as after the group's paths changed", () => {
    const history = ordinaryWeek();
    const moved = after(history, { added: 12_000, removed: 10_090, bytesAdded: 25 * GiB, grew: 4 * GiB });
    expect(judgeBackup({ ...moved, hadParent: false }, history).anomalous).toBe(false);
  });

  it("stays quiet on a group that churns every night", () => {
    const history = [firstBackup(2_000, 4 * GiB)];
    for (let day = 0; day < 5; day += 1) {
      history.push(after(history, { changed: 1_400, bytesAdded: 3 * GiB, grew: 0 }));
    }
    const verdict = judgeBackup(after(history, { changed: 1_900, bytesAdded: 4 * GiB, grew: 0 }), history);
    expect(verdict.anomalous).toBe(false);
    expect(verdict.baseline?.changedShare).toBe(0.7);
  });

  it("weighs a backup after days offline against days of change", () => {
    const history = ordinaryWeek();
    const change = { changed: 6_000, bytesAdded: 4 * GiB, grew: 0 };
    expect(judgeBackup(after(history, { ...change, afterDays: 6 }), history).anomalous).toBe(false);
    expect(judgeBackup(after(history, change), history).anomalous).toBe(true);
  });
});

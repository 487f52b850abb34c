import { describe, expect, it } from "vitest";
import type { Recording } from "../restic/replay-adapter.js";
import { runBackup } from "../testing/backup-run.js";
import { type FixtureVersion, fixture } from "../testing/job-run.js";
import { UNREADABLE_FILES_ERROR } from "./backup-job.js";

const recording = (version: FixtureVersion, name: string) => fixture(version, name);

/** The JSON status lines of a recorded backup, in order. */
function statusLines(recorded: Recording): Record<string, unknown>[] {
  return recorded.stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.message_type === "status");
}

describe("backup on recorded restic output", () => {
  it.each(["0.14.0", "0.18.0"] as const)(
    "%s backup-1: succeeds with restic's summary and reports snapshots",
    async (version) => {
      const backup = recording(version, "backup-1");
      const ran = await runBackup({
        backup,
        snapshots: recording(version, "snapshots"),
      });
      expect(ran.outcome.status).toBe("succeeded");
      expect(ran.outcome.exit_code).toBe(0);
      expect(ran.outcome.error).toBeUndefined();
      expect(ran.outcome.summary).toMatchObject({
        files_new: 7,
        dirs_new: 9,
        total_files_processed: 7,
        total_bytes_processed: 65598,
      });
      expect(ran.outcome.summary).not.toHaveProperty("message_type");
      const snapshotId = ran.outcome.summary?.snapshot_id;
      expect(snapshotId).toMatch(version === "0.14.0" ? /^[0-9a-f]{8}$/ : /^[0-9a-f]{64}$/);
      if (version === "0.18.0") {
        expect(ran.outcome.summary).toHaveProperty("data_added_packed");
      }
      // Status lines become progress, never log lines; the summary is logged as a sentence.
      expect(ran.lines.some((entry) => entry.line.includes('"status"'))).toBe(false);
      expect(ran.lines.some((entry) => entry.line.includes('"summary"'))).toBe(false);
      expect(
        ran.lines.some(
          (entry) =>
            entry.stream === "stdout" &&
            entry.line.startsWith(`snapshot ${String(snapshotId).slice(0, 8)} saved: `),
        ),
      ).toBe(true);
      // Status lines are optional: 0.18 often prints none for a backup this small, 0.14 only the
      // one at the start, which has measured nothing ("0 of 1 files" from the scanner's first
      // moment) and is not sent: the page says unknown until the summary.
      const lines = statusLines(backup);
      if (version === "0.14.0") {
        expect(lines).toHaveLength(1);
        expect(lines[0]).not.toHaveProperty("files_done");
        expect(lines[0]).toMatchObject({ percent_done: 0, total_files: 1 });
      }
      expect(ran.progress).toEqual([]);
      expect(ran.reports).toHaveLength(1);
      const report = ran.reports[0];
      expect(report?.refreshed_at).toBe("2026-11-21T23:00:00.000Z");
      expect(report?.snapshots.length).toBeGreaterThan(1);
      const times = report?.snapshots.map((snapshot) => snapshot.time) ?? [];
      expect([...times].sort().reverse()).toEqual(times);
      const sized = report?.snapshots.filter((snapshot) => snapshot.size_bytes > 0) ?? [];
      expect(sized.length > 0).toBe(version === "0.18.0");
    },
  );

  it.each(["0.14.0", "0.18.0"] as const)(
    "%s backup-read-error: exit 3 succeeds with an error text and readable log",
    async (version) => {
      const ran = await runBackup({ backup: recording(version, "backup-read-error") });
      expect(ran.outcome).toMatchObject({ status: "succeeded", exit_code: 3, error: UNREADABLE_FILES_ERROR });
      expect(ran.outcome.summary?.snapshot_id).toBeDefined();
      const stderr = ran.lines.filter((entry) => entry.stream === "stderr").map((entry) => entry.line);
      expect(stderr[0]).toMatch(/^error during archival of \/proc\/self\/mem: /);
      expect(stderr.some((line) => line.startsWith("{"))).toBe(false);
      expect(ran.reports).toHaveLength(1);
    },
  );

  it("fails with restic's message on other exits and lists no snapshots", async () => {
    const ran = await runBackup({ backup: recording("0.18.0", "err-wrong-password-backup-json") });
    expect(ran.outcome).toEqual({
      status: "failed",
      exit_code: 12,
      error: "Fatal: wrong password or no key found",
    });
    expect(ran.calls.filter((call) => call.args.includes("snapshots"))).toEqual([]);
    expect(ran.reports).toEqual([]);
  });

  it("sends the first progress at once, then at most one per second, and the final state before finishing", async () => {
    // 25,000 files, trimmed to its first 3 and last 2 lines: 4 status lines, then the summary.
    const backup = recording("0.18.0", "backup-big-content");
    const lines = statusLines(backup);
    expect(lines).toHaveLength(4);
    const ran = await runBackup({ backup, msPerLine: 400 });
    const start = new Date("2026-11-21T23:00:00Z").getTime();
    expect(ran.progress.map((entry) => entry.at - start)).toEqual([0, 1000, 2000]);
    for (let i = 1; i < ran.progress.length - 1; i += 1) {
      expect((ran.progress[i]?.at ?? 0) - (ran.progress[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(1000);
    }
    // Line 1 at once; lines 2 and 3 share a window (3 wins); line 4 is the final state.
    const [first, , third, final] = lines;
    expect(ran.progress.map((entry) => entry.progress.files_done)).toEqual([
      first?.files_done ?? 0,
      third?.files_done,
      25000,
    ]);
    expect(first?.files_done).toBeLessThan(Number(third?.files_done));
    const current = first?.current_files;
    expect(ran.progress[0]?.progress).toEqual({
      percent_done: first?.percent_done,
      files_done: first?.files_done ?? 0,
      files_total: first?.total_files,
      bytes_done: first?.bytes_done ?? 0,
      bytes_total: first?.total_bytes,
      ...(Array.isArray(current) ? { current_file: current[0] } : {}),
    });
    expect(final).toMatchObject({ percent_done: 1, total_bytes: final?.bytes_done });
    expect(ran.progress.at(-1)?.progress).toMatchObject({ percent_done: 1, bytes_done: final?.bytes_done });
  });

  it("sends 0.14's progress without its 2^63 seconds_remaining and without the line that measured nothing", async () => {
    // 50,000 empty files, trimmed to its first 3 and last 2 lines: 4 status lines, then the summary.
    const backup = recording("0.14.0", "backup-big-empty");
    const lines = statusLines(backup);
    expect(lines).toHaveLength(4);
    expect(backup.stdout.split("\n")[3]).toContain('"seconds_remaining":9223372036854775808');
    // The first line is the scanner's first moment: "0 of 1 files", nothing measured.
    expect(lines[0]).toEqual({ message_type: "status", percent_done: 0, total_files: 1 });
    const ran = await runBackup({ backup, msPerLine: 1000 });
    expect(ran.progress).toHaveLength(3);
    expect(ran.progress.some((entry) => entry.progress.files_total === 1)).toBe(false);
    const second = lines[1]?.current_files;
    expect(Array.isArray(second) && second[0]).toMatch(/\/big\/empty\/tree\/d000\/e\d\d\/f\d{3}$/);
    expect(ran.progress[0]?.progress.current_file).toBe(Array.isArray(second) ? second[0] : undefined);
    const final = lines[3];
    const current = final?.current_files;
    expect(final?.total_files).toBe(50000);
    // No eta_seconds: 2^63 is restic's "cannot tell", shown as unknown, not as a time.
    expect(ran.progress[2]?.progress).toEqual({
      percent_done: 0,
      files_done: final?.files_done,
      files_total: 50000,
      bytes_done: 0,
      ...(Array.isArray(current) ? { current_file: current[0] } : {}),
    });
  });
});

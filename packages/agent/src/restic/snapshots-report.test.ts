import { createHash } from "node:crypto";
import {
  decodeAgentMessage,
  encode,
  isSnapshotsReportPart,
  MAX_FRAME_BYTES,
  SNAPSHOTS_REPORT_MAX_PARTS,
  type Snapshot,
  type SnapshotsReport,
} from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { createBackupJob } from "../jobs/backup-job.js";
import { backupCommand } from "../testing/backup-run.js";
import {
  EMPTY_OK,
  type FixtureVersion,
  fixture,
  recordedScenario,
  runJobForTest,
} from "../testing/job-run.js";
import { parseSnapshots, REPORT_PART_BYTES, splitReport } from "./snapshots-report.js";

const stdoutOf = (version: FixtureVersion, name: string) => fixture(version, name).stdout;
const REPORT_ID = "01M807RS6G7E17QDDMMZWYAX14";
const BACKUP = backupCommand();

/** restic's RFC3339Nano UTC time cut to milliseconds (Go drops trailing zeros of the fraction). */
function toMillis(time: string): string {
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(time);
  if (!match) {
    throw new Error(`not a UTC RFC3339 time: ${time}`);
  }
  return `${match[1]}.${(match[2] ?? "").padEnd(3, "0").slice(0, 3)}Z`;
}

describe("parseSnapshots on recorded output", () => {
  it("0.18: most recent first, size and file count from the summary block", () => {
    const parsed = parseSnapshots(stdoutOf("0.18.0", "snapshots"));
    if (!parsed.ok) {
      throw new Error(parsed.reason);
    }
    // The oldest is S1, a backup of the recorded tree: 7 files, 65,598 bytes.
    const { tree, host, snapshots } = recordedScenario("0.18.0");
    const recorded = (JSON.parse(stdoutOf("0.18.0", "snapshots")) as { id: string; time: string }[]).find(
      (snapshot) => snapshot.id === snapshots.S1.id,
    );
    expect(recorded).toBeDefined();
    const oldest = parsed.snapshots.at(-1);
    expect(oldest).toEqual({
      id: snapshots.S1.id,
      short_id: snapshots.S1.short_id,
      time: toMillis(recorded?.time ?? ""),
      hostname: host,
      paths: [tree],
      tags: ["t1"],
      size_bytes: 65598,
      file_count: 7,
    });
    const times = parsed.snapshots.map((snapshot) => snapshot.time);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it("0.14: no summary block, so size and count are 0", () => {
    const parsed = parseSnapshots(stdoutOf("0.14.0", "snapshots"));
    expect(parsed.ok && parsed.snapshots.every((s) => s.size_bytes === 0 && s.file_count === 0)).toBe(true);
    expect(parsed.ok && parsed.snapshots.length).toBeGreaterThan(1);
  });

  it("an empty repository is an empty list", () => {
    expect(parseSnapshots(stdoutOf("0.18.0", "snapshots-empty-repo"))).toEqual({ ok: true, snapshots: [] });
    expect(parseSnapshots(stdoutOf("0.14.0", "snapshots-empty-repo"))).toEqual({ ok: true, snapshots: [] });
  });
});

describe("parseSnapshots", () => {
  it("converts a local offset to UTC and fills absent tags and hostname", () => {
    const parsed = parseSnapshots(
      JSON.stringify([
        {
          time: "2026-11-22T01:30:00.123456789+01:00",
          id: "ab".repeat(32),
          short_id: "abababab",
          paths: ["/x"],
        },
      ]),
    );
    expect(parsed).toEqual({
      ok: true,
      snapshots: [
        {
          id: "ab".repeat(32),
          short_id: "abababab",
          time: "2026-11-22T00:30:00.123Z",
          hostname: "",
          paths: ["/x"],
          tags: [],
          size_bytes: 0,
          file_count: 0,
        },
      ],
    });
  });

  it("refuses output that is not a snapshot array", () => {
    expect(parseSnapshots("Fatal: oops").ok).toBe(false);
    expect(parseSnapshots("{}").ok).toBe(false);
    expect(parseSnapshots('[{"id":"zz"}]').ok).toBe(false);
  });
});

const FIRST_SNAPSHOT_AT = "2025-06-01T00:00:00Z";

/** A realistic `restic snapshots --json` of `count` snapshots, oldest first, made from the real 0.18 entries. */
function bigSnapshotsStdout(count: number): string {
  const templates = JSON.parse(stdoutOf("0.18.0", "snapshots")) as Array<Record<string, unknown>>;
  const start = Date.parse(FIRST_SNAPSHOT_AT);
  const entries = Array.from({ length: count }, (_, i) => {
    const template = templates[i % templates.length] ?? {};
    const id = createHash("sha256").update(`snapshot ${i}`).digest("hex");
    // restic prints the snapshot host's local offset and nanoseconds.
    const local = new Date(start + i * 3_600_000 + 3_600_000).toISOString().slice(0, 19);
    const summary = {
      ...(template.summary as object),
      total_bytes_processed: 65_598 + i,
      total_files_processed: 7 + (i % 50),
    };
    return {
      ...template,
      time: `${local}.${String(i).padStart(9, "0")}+01:00`,
      id,
      short_id: id.slice(0, 8),
      summary,
    };
  });
  return JSON.stringify(entries);
}

/** What the server does with the frames: decode each, then put the parts back together. */
function reassemble(frames: string[]): { snapshots: Snapshot[]; reportIds: Set<string | undefined> } {
  const payloads = frames.map((frame) => {
    const decoded = decodeAgentMessage(frame);
    if (!decoded.ok || decoded.message.type !== "snapshots.report") {
      throw new Error(decoded.ok ? decoded.message.type : decoded.error.message);
    }
    return decoded.message.payload;
  });
  const parts = payloads.filter(isSnapshotsReportPart);
  for (const [index, part] of parts.entries()) {
    expect(part).toMatchObject({ part: index, parts: parts.length, refreshed_at: payloads[0]?.refreshed_at });
  }
  return {
    snapshots: payloads.flatMap((payload) => payload.snapshots),
    reportIds: new Set(payloads.map((payload) => payload.report_id)),
  };
}

const REFRESHED_AT = "2026-11-22T03:00:00.000Z";

describe("splitReport", () => {
  const snapshot = (i: number, pathBytes = 400): Snapshot => ({
    id: i.toString(16).padStart(64, "0"),
    short_id: i.toString(16).padStart(8, "0"),
    time: "2026-11-21T23:00:00.000Z",
    hostname: "vm",
    paths: [`/srv/${"p".repeat(pathBytes)}`],
    tags: ["t"],
    size_bytes: i,
    file_count: i,
  });

  it("sends a list that fits one part as one whole report, without part fields", () => {
    const { reports, omitted } = splitReport([snapshot(1), snapshot(2)], REFRESHED_AT);
    expect(reports).toEqual([{ snapshots: [snapshot(1), snapshot(2)], refreshed_at: REFRESHED_AT }]);
    expect(omitted).toBe(0);
    expect(splitReport([], REFRESHED_AT).reports).toEqual([{ snapshots: [], refreshed_at: REFRESHED_AT }]);
  });

  it("sends 10,000 real-shaped snapshots as several frames under the cap that reassemble to the list", () => {
    const parsed = parseSnapshots(bigSnapshotsStdout(10_000));
    if (!parsed.ok) {
      throw new Error(parsed.reason);
    }
    expect(parsed.snapshots).toHaveLength(10_000);
    const whole = encode("snapshots.report", { snapshots: [], refreshed_at: REFRESHED_AT });
    const wholeBytes = parsed.snapshots.reduce(
      (sum, s) => sum + Buffer.byteLength(JSON.stringify(s)) + 1,
      Buffer.byteLength(whole),
    );
    expect(wholeBytes).toBeGreaterThan(MAX_FRAME_BYTES);

    const { reports, omitted } = splitReport(parsed.snapshots, REFRESHED_AT, {
      newReportId: () => REPORT_ID,
    });
    expect(omitted).toBe(0);
    expect(reports.length).toBeGreaterThan(2);
    const frames = reports.map((report) => encode("snapshots.report", report));
    for (const frame of frames) {
      expect(Buffer.byteLength(frame)).toBeLessThanOrEqual(REPORT_PART_BYTES);
      expect(Buffer.byteLength(frame)).toBeLessThan(MAX_FRAME_BYTES);
    }
    const { snapshots, reportIds } = reassemble(frames);
    expect(reportIds).toEqual(new Set([REPORT_ID]));
    expect(snapshots).toEqual(parsed.snapshots);
    // Newest first, in UTC: the last of restic's entries, an hour apart from 2025-06-01.
    expect(snapshots[0]?.time).toBe(
      new Date(Date.parse(FIRST_SNAPSHOT_AT) + 9_999 * 3_600_000).toISOString(),
    );
  });

  it("gives every part of one report the same new report id, and a new report a new one", () => {
    const all = Array.from({ length: 50 }, (_, i) => snapshot(i + 1));
    const first = splitReport(all, REFRESHED_AT, { maxPartBytes: 4_096 }).reports;
    const second = splitReport(all, REFRESHED_AT, { maxPartBytes: 4_096 }).reports;
    const idsOf = (reports: SnapshotsReport[]) => new Set(reports.map((report) => report.report_id));
    expect(idsOf(first).size).toBe(1);
    expect([...idsOf(first)][0]).toMatch(/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
    expect(idsOf(second)).not.toEqual(idsOf(first));
  });

  it("keeps the most recent snapshots of SNAPSHOTS_REPORT_MAX_PARTS parts and counts the rest", () => {
    // About one snapshot per part at this budget.
    const all = Array.from({ length: SNAPSHOTS_REPORT_MAX_PARTS + 10 }, (_, i) => snapshot(i + 1));
    const { reports, omitted } = splitReport(all, REFRESHED_AT, { maxPartBytes: 1_000 });
    expect(reports).toHaveLength(SNAPSHOTS_REPORT_MAX_PARTS);
    expect(omitted).toBe(10);
    expect(reports.flatMap((report) => report.snapshots)).toEqual(all.slice(0, SNAPSHOTS_REPORT_MAX_PARTS));
  });

  it("gives a snapshot larger than a part a frame of its own, and leaves out one larger than any frame", () => {
    const { reports, omitted } = splitReport(
      [snapshot(1, 10), snapshot(2, 3_000), snapshot(3, MAX_FRAME_BYTES), snapshot(4, 10)],
      REFRESHED_AT,
      { maxPartBytes: 2_000 },
    );
    expect(omitted).toBe(1);
    expect(reports.map((report) => report.snapshots.map((s) => s.size_bytes))).toEqual([[1], [2], [4]]);
    for (const report of reports) {
      expect(() => encode("snapshots.report", report)).not.toThrow();
    }
  });
});

/** A recorded backup whose listing afterwards prints `stdout`. */
function backupListing(stdout: string) {
  return runJobForTest((deps) => createBackupJob({ ...deps, agentDirs: [] }), BACKUP, {
    replay: (subcommand) => {
      if (subcommand === "snapshots") {
        return { stdout, stderr: "", exitCode: 0 };
      }
      return subcommand === "backup" ? fixture("0.18.0", "backup-1") : EMPTY_OK;
    },
  });
}

describe("a backup's snapshot report", () => {
  it("reaches the server as parts when the repository holds 10,000 snapshots", async () => {
    const stdout = bigSnapshotsStdout(10_000);
    const ran = await backupListing(stdout);
    expect(ran.outcome.status).toBe("succeeded");
    expect(ran.reports.length).toBeGreaterThan(2);
    const { snapshots, reportIds } = reassemble(
      ran.reports.map((report) => encode("snapshots.report", report)),
    );
    expect(reportIds.size).toBe(1);
    expect(snapshots).toHaveLength(10_000);
    const parsed = parseSnapshots(stdout);
    expect(parsed.ok && snapshots).toEqual(parsed.ok && parsed.snapshots);
    expect(ran.log.entries.filter((entry) => entry.level === "warn")).toEqual([]);
  });

  it("reads a snapshot list printed as one line longer than the default 16 MiB line cap", async () => {
    const stdout = bigSnapshotsStdout(30_000);
    expect(Buffer.byteLength(stdout)).toBeGreaterThan(16 * 1024 * 1024);
    const ran = await backupListing(stdout);
    expect(ran.outcome.status).toBe("succeeded");
    const { snapshots } = reassemble(ran.reports.map((report) => encode("snapshots.report", report)));
    expect(snapshots).toHaveLength(30_000);
  });
});

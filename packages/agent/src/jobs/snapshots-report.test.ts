import { join } from "node:path";
import { encode, MAX_FRAME_BYTES, type Snapshot } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { loadRecording } from "../restic/replay-adapter.js";
import { resticFixturesDir } from "../testing/tools.js";
import { fitToFrame, parseSnapshots } from "./snapshots-report.js";

const fixtures = resticFixturesDir();
const stdoutOf = (version: string, name: string) =>
  loadRecording(join(fixtures ?? "", version, "local"), name).stdout;

describe.skipIf(fixtures === undefined)("parseSnapshots on recorded output", () => {
  it("0.18: most recent first, size and file count from the summary block", () => {
    const parsed = parseSnapshots(stdoutOf("0.18.0", "snapshots"));
    if (!parsed.ok) {
      throw new Error(parsed.reason);
    }
    const oldest = parsed.snapshots.at(-1);
    expect(oldest).toEqual({
      id: "c503a2e1411551581f05e3024dc276492c1af6f7dafd51834fef527d035c3680",
      short_id: "c503a2e1",
      time: "2026-11-21T23:41:14.408Z",
      hostname: "vm",
      paths: ["/srv/lab/src/tree"],
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

describe("fitToFrame", () => {
  const snapshot = (i: number): Snapshot => ({
    id: i.toString(16).padStart(64, "0"),
    short_id: i.toString(16).padStart(8, "0"),
    time: "2026-11-21T23:00:00.000Z",
    hostname: "vm",
    paths: [`/srv/${"p".repeat(400)}`],
    tags: ["t"],
    size_bytes: i,
    file_count: i,
  });

  it("keeps everything that fits", () => {
    const { report, omitted } = fitToFrame([snapshot(1), snapshot(2)], "2026-11-21T23:00:00.000Z");
    expect(report.snapshots).toHaveLength(2);
    expect(omitted).toBe(0);
  });

  it("keeps the most recent snapshots that fit one frame and counts the rest", () => {
    const all = Array.from({ length: 4000 }, (_, i) => snapshot(i + 1));
    const { report, omitted } = fitToFrame(all, "2026-11-21T23:00:00.000Z");
    expect(omitted).toBeGreaterThan(0);
    expect(report.snapshots.length + omitted).toBe(4000);
    expect(report.snapshots[0]).toEqual(all[0]);
    const frame = encode("snapshots.report", report);
    expect(Buffer.byteLength(frame)).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    const oneMore = { ...report, snapshots: all.slice(0, report.snapshots.length + 1) };
    expect(() => encode("snapshots.report", oneMore)).toThrow(/frame exceeds/);
  });
});

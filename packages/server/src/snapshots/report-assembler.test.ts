/**
 * @module snapshots/report-assembler.test
 * Parts back into one report: any order, duplicates, superseded and stale reports, the idle
 * timeout and the caps, and what the log says about each drop.
 */
import type { Snapshot, SnapshotsReportPart } from "@fleetback/protocol";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import { createLogger } from "../log.js";
import { numberedSnapshot } from "../testing/seed.js";
import { createReportAssembler, type ReportAssemblerOptions } from "./report-assembler.js";

const REFRESHED_AT = "2026-11-22T03:00:00Z";
const OLDER_ID = "01M807RS6G7E17QDDMMZWYAX14";
const REPORT_ID = "01M807RS6G7E17QDDMMZWYAX15";
const NEWER_ID = "01M807RS6G7E17QDDMMZWYAX16";

function snapshot(index: number): Snapshot {
  return numberedSnapshot(index, {
    paths: ["/srv/secret-project"],
    tags: ["etc"],
    size_bytes: index,
    file_count: index,
  });
}

/** `total` snapshots newest first, cut into `parts` parts of one report. */
function partsOf(total: number, parts: number, reportId = REPORT_ID): SnapshotsReportPart[] {
  const list = Array.from({ length: total }, (_, i) => snapshot(total - i));
  const size = Math.ceil(total / parts);
  return Array.from({ length: parts }, (_, part) => ({
    snapshots: list.slice(part * size, (part + 1) * size),
    refreshed_at: REFRESHED_AT,
    report_id: reportId,
    part,
    parts,
  }));
}

function setup(options: Partial<ReportAssemblerOptions> = {}) {
  const timers = createManualTimers();
  const lines: string[] = [];
  const log = createLogger("debug", { write: (line: string) => lines.push(line) });
  const assembler = createReportAssembler({ hostId: "host-1", log, timers, ...options });
  const logged = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { assembler, timers, lines, logged };
}

function at<T>(list: readonly T[], index: number): T {
  const item = list[index];
  if (item === undefined) {
    throw new Error(`no item ${index}`);
  }
  return item;
}

describe("report assembler", () => {
  it("passes a whole report through at once", () => {
    const { assembler } = setup();
    const whole = { snapshots: [snapshot(1)], refreshed_at: REFRESHED_AT };
    expect(assembler.accept(whole)).toBe(whole);
    expect(assembler.accept({ snapshots: [], refreshed_at: REFRESHED_AT })).toEqual({
      snapshots: [],
      refreshed_at: REFRESHED_AT,
    });
  });

  it("yields the whole list, in part order, only with the last part", () => {
    const { assembler, timers } = setup();
    const parts = partsOf(10, 3);
    expect(assembler.accept(at(parts, 0))).toBeUndefined();
    expect(assembler.accept(at(parts, 1))).toBeUndefined();
    expect(assembler.pending()).toEqual({ reportId: REPORT_ID, parts: 3, received: 2, snapshots: 8 });
    expect(assembler.accept(at(parts, 2))).toEqual({
      snapshots: parts.flatMap((part) => part.snapshots),
      refreshed_at: REFRESHED_AT,
    });
    expect(assembler.pending()).toBeUndefined();
    expect(timers.pending()).toBe(0);
  });

  it("puts parts arriving out of order, one twice, back in order once", () => {
    const { assembler, logged } = setup();
    const parts = partsOf(100, 4);
    const results = [2, 0, 2, 3, 1, 1].map((index) => assembler.accept(at(parts, index)));
    expect(results.slice(0, 4)).toEqual([undefined, undefined, undefined, undefined]);
    expect(results[4]?.snapshots).toEqual(partsOf(100, 1)[0]?.snapshots);
    // The late duplicate belongs to a finished report: it starts nothing.
    expect(results[5]).toBeUndefined();
    expect(assembler.pending()).toBeUndefined();
    const messages = logged().map((entry) => entry.msg);
    expect(messages).toContain("duplicate part of a snapshot report ignored");
    expect(messages).toContain("part of a finished snapshot report ignored");
  });

  it("completes a one-part report at once", () => {
    const { assembler } = setup();
    expect(assembler.accept(at(partsOf(3, 1), 0))?.snapshots).toHaveLength(3);
  });

  it("drops an assembly for a newer report_id and ignores later parts of the older one", () => {
    const { assembler, logged } = setup();
    const older = partsOf(10, 2, OLDER_ID);
    const newer = partsOf(20, 2, REPORT_ID);
    assembler.accept(at(older, 0));
    assembler.accept(at(newer, 0));
    expect(assembler.accept(at(older, 1))).toBeUndefined();
    expect(assembler.pending()).toMatchObject({ reportId: REPORT_ID, received: 1 });
    expect(assembler.accept(at(newer, 1))?.snapshots).toHaveLength(20);
    expect(logged()).toContainEqual(
      expect.objectContaining({
        level: 20,
        msg: "incomplete snapshot report dropped; cached list kept",
        report_id: OLDER_ID,
        reason: "superseded by a newer report",
      }),
    );
  });

  it("lets a whole report supersede an assembly, whose later parts are then ignored", () => {
    const { assembler } = setup();
    const parts = partsOf(10, 2);
    assembler.accept(at(parts, 0));
    const whole = { snapshots: [snapshot(99)], refreshed_at: REFRESHED_AT };
    expect(assembler.accept(whole)).toBe(whole);
    expect(assembler.accept(at(parts, 1))).toBeUndefined();
    expect(assembler.pending()).toBeUndefined();
  });

  it("drops an assembly that gets no part for the idle time, and with a warning", () => {
    const { assembler, timers, logged } = setup({ idleMs: 120_000 });
    const parts = partsOf(10, 3);
    assembler.accept(at(parts, 0));
    assembler.accept(at(parts, 1));
    // Each part re-arms the one timer.
    expect(timers.pending()).toBe(1);
    timers.runAll();
    expect(assembler.pending()).toBeUndefined();
    expect(assembler.accept(at(parts, 2))).toBeUndefined();
    const warning = logged().find((entry) => entry.level === 40);
    expect(warning).toMatchObject({
      host_id: "host-1",
      report_id: REPORT_ID,
      received: 2,
      parts: 3,
      snapshots: 8,
      reason: "no part for 120 s",
    });
  });

  it.each([
    ["a different parts count", { parts: 4 }],
    ["a part index beyond parts", { part: 5 }],
    ["a different refreshed_at", { refreshed_at: "2026-11-22T03:00:01Z" }],
  ])("drops the report on %s", (_name, change) => {
    const { assembler, logged } = setup();
    const parts = partsOf(9, 3);
    assembler.accept(at(parts, 0));
    expect(assembler.accept({ ...at(parts, 1), ...change })).toBeUndefined();
    expect(assembler.pending()).toBeUndefined();
    expect(assembler.accept(at(parts, 1))).toBeUndefined();
    expect(assembler.accept(at(parts, 2))).toBeUndefined();
    expect(logged().filter((entry) => entry.level === 40)).toHaveLength(1);
  });

  it("refuses a report whose first part already claims an index beyond its parts", () => {
    const { assembler } = setup();
    expect(assembler.accept({ ...at(partsOf(2, 2), 0), part: 2 })).toBeUndefined();
    expect(assembler.pending()).toBeUndefined();
  });

  it("drops a report with more snapshots than the cap", () => {
    const { assembler, logged } = setup({ maxSnapshots: 25 });
    const parts = partsOf(30, 3);
    assembler.accept(at(parts, 0));
    assembler.accept(at(parts, 1));
    expect(assembler.accept(at(parts, 2))).toBeUndefined();
    expect(assembler.pending()).toBeUndefined();
    expect(logged().find((entry) => entry.level === 40)).toMatchObject({ reason: "more than 25 snapshots" });
  });

  it("discards on disconnect and never logs snapshot contents", () => {
    const { assembler, timers, lines, logged } = setup();
    assembler.accept(at(partsOf(10, 2), 0));
    assembler.discard("agent disconnected");
    expect(assembler.pending()).toBeUndefined();
    expect(timers.pending()).toBe(0);
    expect(logged().at(-1)).toMatchObject({ level: 20, reason: "agent disconnected", received: 1 });
    expect(lines.join("\n")).not.toContain("secret-project");
  });

  it("accepts a newer report after one was dropped", () => {
    const { assembler, timers } = setup();
    assembler.accept(at(partsOf(10, 2), 0));
    timers.runAll();
    const newer = partsOf(4, 2, NEWER_ID);
    assembler.accept(at(newer, 1));
    expect(assembler.accept(at(newer, 0))?.snapshots).toEqual(newer.flatMap((part) => part.snapshots));
  });
});

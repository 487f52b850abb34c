import { CronExpressionParser } from "cron-parser";
import { describe, expect, it } from "vitest";
import { createCronTimes, intervalEndingAt, MAX_RUN } from "./cron-times.js";

const CRONS = ["0 * * * *", "30 2 * * *", "0 9 * * 1-5", "*/15 * * * *", "0 0 1 * *", "*/20 * * * * *"];
const ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"];

function direct(cron: string, zone: string, at: Date, direction: "next" | "prev"): number {
  const expr = CronExpressionParser.parse(cron, { tz: zone, currentDate: at });
  return (direction === "next" ? expr.next() : expr.prev()).getTime();
}

/** A small deterministic generator, so a failure names a reproducible instant. */
function* instants(seed: number, count: number, from: number, span: number): Generator<Date> {
  let state = seed;
  for (let i = 0; i < count; i++) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    yield new Date(from + Math.floor((state / 2 ** 31) * span));
  }
}

describe("cron times", () => {
  it("answers exactly as cron-parser does, in any order of questions, across daylight-saving changes", () => {
    const times = createCronTimes();
    // Around the 2026 autumn changes (Europe 25 Oct, US 1 Nov) and Lord Howe's half-hour shift (5 Oct).
    const from = Date.parse("2026-09-28T00:00:00Z");
    const span = 40 * 86_400_000;
    for (const cron of CRONS) {
      for (const zone of ZONES) {
        for (const at of instants(cron.length * 31 + zone.length, 30, from, span)) {
          expect(
            times.nextAfter(cron, zone, at)?.getTime(),
            `${cron} ${zone} next after ${at.toISOString()}`,
          ).toBe(direct(cron, zone, at, "next"));
          expect(
            times.prevBefore(cron, zone, at)?.getTime(),
            `${cron} ${zone} prev before ${at.toISOString()}`,
          ).toBe(direct(cron, zone, at, "prev"));
        }
      }
    }
  }, 120_000);

  it("is strict at a fire itself and measures the interval across a change", () => {
    const times = createCronTimes();
    const fire = new Date("2026-11-01T14:00:00Z");
    expect(times.nextAfter("0 9 * * *", "America/New_York", fire)).toEqual(new Date("2026-11-02T14:00:00Z"));
    expect(times.prevBefore("0 9 * * *", "America/New_York", fire)).toEqual(new Date("2026-10-31T13:00:00Z"));
    expect(intervalEndingAt(times, "0 9 * * *", "America/New_York", fire)).toBe(25 * 3_600_000);
  });

  it("answers far from what it walked, and when nothing fires again", () => {
    const times = createCronTimes();
    const near = new Date("2026-11-21T12:00:00Z");
    expect(times.nextAfter("*/20 * * * * *", "UTC", near)).toEqual(new Date("2026-11-21T12:00:20Z"));
    // Months away for a schedule firing every 20 s: far beyond one extension, answered directly.
    const far = new Date("2026-03-01T00:00:05Z");
    expect(times.nextAfter("*/20 * * * * *", "UTC", far)).toEqual(new Date("2026-03-01T00:00:20Z"));
    expect(times.prevBefore("*/20 * * * * *", "UTC", far)).toEqual(new Date("2026-03-01T00:00:00Z"));
    expect(times.nextAfter("0 0 30 2 *", "UTC", near)).toBeUndefined();
    expect(times.nextAfter("not cron", "UTC", near)).toBeUndefined();
    expect(times.nextAfter("0 * * * *", "Not/AZone", near)).toBeUndefined();
  });

  it("keeps at most MAX_RUN fires per expression while time moves on", () => {
    const times = createCronTimes();
    let at = Date.parse("2026-11-21T00:00:00Z");
    // A day of a per-10-second schedule asked every 5 minutes: far more fires than MAX_RUN.
    for (let i = 0; i < 2 * 288; i++, at += 150_000) {
      expect(times.nextAfter("*/10 * * * * *", "UTC", new Date(at))?.getTime()).toBe(at + 10_000);
    }
    expect(MAX_RUN).toBeGreaterThan(1_000);
  });
});

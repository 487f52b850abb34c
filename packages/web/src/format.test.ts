import { describe, expect, it } from "vitest";
import { formatBytes, formatDuration, formatIso, formatTime } from "./format.js";

// One formatter for pages and scripts (static/format.js): these are the words both print.
describe("formatTime", () => {
  const now = new Date("2026-11-28T10:00:00Z");

  it("writes the wall clock of the zone with the zone's name, without the current year", () => {
    expect(formatTime("2026-11-28T09:19:00Z", "Europe/Berlin", now)).toBe("28 Nov, 10:19 CET");
    expect(formatTime(new Date("2026-11-28T09:19:59Z"), "UTC", now)).toBe("28 Nov, 09:19 UTC");
    expect(formatTime(Date.parse("2026-07-01T12:00:00Z"), "Europe/Berlin", now)).toBe("1 Jul, 14:00 CEST");
  });

  it("names the offset where English has no abbreviation, half hours included", () => {
    expect(formatTime("2026-11-28T09:19:00Z", "America/New_York", now)).toBe("28 Nov, 04:19 GMT-5");
    expect(formatTime("2026-11-28T09:19:00Z", "Asia/Kolkata", now)).toBe("28 Nov, 14:49 GMT+5:30");
  });

  it("gives the year of any other year, also where the zone's new year differs from UTC's", () => {
    expect(formatTime("2025-03-03T09:00:00Z", "UTC", now)).toBe("3 Mar 2025, 09:00 UTC");
    // 23:30 UTC on 31 Dec 2026 is already 2027 in Berlin.
    expect(formatTime("2026-12-31T23:30:00Z", "UTC", now)).toBe("31 Dec, 23:30 UTC");
    expect(formatTime("2026-12-31T23:30:00Z", "Europe/Berlin", now)).toBe("1 Jan 2027, 00:30 CET");
    expect(formatTime("2026-09-15T08:00:00Z", "UTC", now)).toBe("15 Sep, 08:00 UTC");
  });

  it("tells the two sides of a DST change apart by the zone, including the repeated hour", () => {
    expect(formatTime("2026-03-29T00:59:00Z", "Europe/Berlin", now)).toBe("29 Mar, 01:59 CET");
    expect(formatTime("2026-03-29T01:00:00Z", "Europe/Berlin", now)).toBe("29 Mar, 03:00 CEST");
    expect(formatTime("2026-10-25T00:30:00Z", "Europe/Berlin", now)).toBe("25 Oct, 02:30 CEST");
    expect(formatTime("2026-10-25T01:30:00Z", "Europe/Berlin", now)).toBe("25 Oct, 02:30 CET");
  });

  it("says – for what is no time, and UTC for a zone this runtime does not know", () => {
    for (const value of ["not a date", "", null, undefined, Number.NaN, {}, "2026-13-45T00:00:00Z"]) {
      expect(formatTime(value, "UTC", now)).toBe("–");
      expect(formatIso(value)).toBe("–");
    }
    expect(formatTime("2026-11-28T09:19:00Z", "Nowhere/Atlantis", now)).toBe("28 Nov, 09:19 UTC");
  });

  it("gives ISO 8601 in UTC, whatever offset the input had, with milliseconds only where there are some", () => {
    expect(formatIso("2026-11-28T10:19:07.123+01:00")).toBe("2026-11-28T09:19:07.123Z");
    expect(formatIso(new Date("2026-11-28T09:19:00Z"))).toBe("2026-11-28T09:19:00Z");
    expect(formatIso("2026-11-24T23:59:59.999Z")).toBe("2026-11-24T23:59:59.999Z");
    // restic writes nanoseconds
    expect(formatIso("2026-11-21T10:00:00.123456789+01:00")).toBe("2026-11-21T09:00:00.123Z");
  });
});

describe("formatBytes and formatDuration", () => {
  it.each([
    [0, "0 B"],
    [1023, "1023 B"],
    [1536, "1.50 KiB"],
    [65598, "64.1 KiB"],
    [5 * 1024 ** 3, "5.00 GiB"],
    ["2048", "2.00 KiB"],
    [-1, "–"],
    [null, "–"],
    [undefined, "–"],
    ["", "–"],
    ["lots", "–"],
  ])("formatBytes(%s)", (input, expected) => {
    expect(formatBytes(input)).toBe(expected);
  });

  it.each([
    [0.43, "0.4 s"],
    [4.25, "4.3 s"],
    [4, "4 s"],
    [12.6, "13 s"],
    [125, "2 min 5 s"],
    [7260, "2 h 1 min"],
    [-1, "–"],
    [null, "–"],
    ["soon", "–"],
  ])("formatDuration(%s)", (input, expected) => {
    expect(formatDuration(input)).toBe(expected);
  });
});

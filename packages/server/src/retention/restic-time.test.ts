import { describe, expect, it } from "vitest";
import { time } from "../testing/restic-time-text.js";
import {
  compareInstants,
  dayBucket,
  hourBucket,
  instantOf,
  monthBucket,
  parseResticTime,
  weekBucket,
} from "./restic-time.js";

describe("snapshot times as restic reads them", () => {
  it("keeps the stored wall clock and the instant to the nanosecond", () => {
    const parsed = time("2024-03-22T00:10:00.123456789+05:30");
    expect(parsed).toMatchObject({
      year: 2024,
      month: 3,
      day: 22,
      hour: 0,
      offsetMinutes: 330,
      nanos: 123_456_789,
    });
    expect(parsed.seconds).toBe(Date.parse("2024-03-21T18:40:00Z") / 1000);
    expect(compareInstants(parsed, time("2024-03-21T18:40:00.123456788Z"))).toBeGreaterThan(0);
  });

  it("buckets by the stored wall clock, not by UTC", () => {
    const india = time("2024-03-22T00:10:00+05:30");
    const utc = time("2024-03-21T20:00:00Z");
    expect(dayBucket(india)).toBe(20240322);
    expect(dayBucket(utc)).toBe(20240321);
    expect(hourBucket(time("2024-03-31T07:05:00+05:30"))).toBe(hourBucket(time("2024-03-31T07:55:00+05:30")));
    expect(monthBucket(time("2024-02-29T23:30:00-05:00"))).toBe(202402);
  });

  it.each([
    ["2020-12-31T10:00:00Z", 202053],
    ["2021-01-03T22:00:00Z", 202053],
    ["2021-01-04T09:00:00Z", 202101],
    ["2024-12-30T09:00:00Z", 202501],
    ["2024-03-17T23:00:00-04:00", 202411],
  ])("puts %s in ISO week %i", (text, week) => {
    expect(weekBucket(time(text))).toBe(week);
  });

  it.each([
    "2024-02-30T00:00:00Z",
    "2024-03-01T24:00:00Z",
    "2024-03-01 10:00:00Z",
    "2024-03-01T10:00:00",
    "",
  ])("refuses %j", (text) => {
    expect(parseResticTime(text)).toBeUndefined();
  });

  it("reads a Date as an instant", () => {
    expect(instantOf(new Date("2024-03-01T00:00:00.250Z"))).toEqual({
      seconds: Date.parse("2024-03-01T00:00:00Z") / 1000,
      nanos: 250_000_000,
    });
  });
});

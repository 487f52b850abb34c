import { describe, expect, it } from "vitest";
import { checkCron } from "./cron.js";
import { describeCron, nextRuns, scheduleTiming } from "./cron-description.js";

describe("describeCron", () => {
  it.each([
    ["* * * * *", "Every minute"],
    ["*/15 * * * *", "Every 15 minutes"],
    ["5 * * * *", "Every hour at :05"],
    ["30 */6 * * *", "Every 6 hours at :30, from 00:30"],
    ["0 3 * * *", "Every day at 03:00"],
    ["0 0 3 * * *", "Every day at 03:00"],
    ["15 2,14 * * *", "Every day at 02:15 and 14:15"],
    ["0 22 * * 1-5", "Every weekday (Monday to Friday) at 22:00"],
    ["0 22 * * mon-fri", "Every weekday (Monday to Friday) at 22:00"],
    ["0 9 * * 1,3,5", "Every Monday, Wednesday and Friday at 09:00"],
    ["0 4 * * 0", "Every Sunday at 04:00"],
    ["0 4 * * 7", "Every Sunday at 04:00"],
    ["0 10 * * 6,0", "Every Saturday and Sunday at 10:00"],
    ["0 8 * * 5-7", "Every Friday, Saturday and Sunday at 08:00"],
    ["0 5 1 * *", "On the 1st of every month at 05:00"],
    ["0 5 2,22,23 * *", "On the 2nd, 22nd and 23rd of every month at 05:00"],
    ["0 5 11 * *", "On the 11th of every month at 05:00"],
  ])("%s reads %j", (cron, sentence) => {
    expect(checkCron(cron).ok).toBe(true);
    expect(describeCron(cron)).toBe(sentence);
  });

  it.each([
    // Shapes without a sentence fall back to the expression itself.
    "*/10 * * * * *",
    "0 3 * 1 *",
    "0 3 1 * 1",
    "0,30 3 * * *",
    "0 1-5 * * *",
    "0-59/5 * * * *",
  ])("%s has no sentence", (cron) => {
    expect(describeCron(cron)).toBeUndefined();
  });
});

describe("nextRuns", () => {
  const now = new Date("2026-11-21T12:00:00Z"); // a Saturday

  it("reads the expression in the zone: 03:00 in Berlin is 02:00Z in winter", () => {
    expect(nextRuns("0 3 * * *", "Europe/Berlin", now).map((d) => d.toISOString())).toEqual([
      "2026-11-22T02:00:00.000Z",
      "2026-11-23T02:00:00.000Z",
      "2026-11-24T02:00:00.000Z",
    ]);
    expect(nextRuns("0 3 * * *", "UTC", now, 1).map((d) => d.toISOString())).toEqual([
      "2026-11-22T03:00:00.000Z",
    ]);
  });

  it("skips the weekend for a weekday schedule and follows daylight saving", () => {
    expect(nextRuns("0 22 * * 1-5", "America/New_York", now).map((d) => d.toISOString())).toEqual([
      "2026-11-24T03:00:00.000Z",
      "2026-11-25T03:00:00.000Z",
      "2026-11-26T03:00:00.000Z",
    ]);
    // Berlin leaves summer time on 25 October 2026: 03:00 local moves from 01:00Z to 02:00Z.
    expect(
      nextRuns("0 3 * * *", "Europe/Berlin", new Date("2026-10-23T12:00:00Z")).map((d) => d.toISOString()),
    ).toEqual(["2026-10-24T01:00:00.000Z", "2026-10-25T02:00:00.000Z", "2026-10-26T02:00:00.000Z"]);
  });

  it("answers fewer runs, not an error, for a date that never comes", () => {
    expect(nextRuns("0 0 30 2 *", "UTC", now)).toEqual([]);
  });

  it("scheduleTiming bundles sentence, runs and zone", () => {
    expect(scheduleTiming("0 3 1,2 * 0", "UTC", now)).toEqual({
      description: null,
      next_runs: expect.any(Array),
      time_zone: "UTC",
    });
    expect(scheduleTiming("0 3 * * *", "UTC", now).description).toBe("Every day at 03:00");
  });
});

import { describe, expect, it } from "vitest";
import { time } from "../testing/restic-time-text.js";
import { formatResticDuration, parseResticDuration, windowStart } from "./restic-duration.js";
import { instantOf } from "./restic-time.js";

describe("restic durations", () => {
  it("spells them as restic does in its reasons", () => {
    const parts = (text: string) => {
      const duration = parseResticDuration(text);
      return duration === undefined ? undefined : formatResticDuration(duration);
    };
    expect(parts("1y2m3d4h")).toBe("1y2m3d4h");
    expect(parts("0y7d")).toBe("7d");
    expect(parts("007d")).toBe("7d");
    expect(parts("7x")).toBeUndefined();
    expect(parts("1d2y")).toBeUndefined();
  });

  it("opens the window on the newest snapshot's calendar: 1m back from 31 March is 2 March", () => {
    const latest = time("2024-03-31T10:00:00+05:30");
    const month = { years: 0, months: 1, days: 0, hours: 0 };
    expect(windowStart(latest, month)).toEqual(instantOf(new Date("2024-03-02T10:00:00+05:30")));
    const mixed = { years: 0, months: 1, days: 2, hours: 3 };
    expect(windowStart(latest, mixed)).toEqual(instantOf(new Date("2024-02-29T07:00:00+05:30")));
  });

  it("keeps the newest snapshot's nanoseconds and opens no window before the range of Date", () => {
    const latest = time("2024-03-31T10:00:00.5Z");
    expect(windowStart(latest, { years: 0, months: 0, days: 0, hours: 1 })?.nanos).toBe(500_000_000);
    expect(windowStart(latest, { years: 300_000, months: 0, days: 0, hours: 0 })).toBeUndefined();
  });
});

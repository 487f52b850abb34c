import { describe, expect, it } from "vitest";
import { zonedRfc3339 } from "./zoned-time.js";

describe("a snapshot's time in the host's zone", () => {
  it("writes the wall clock and the offset of the zone at that instant", () => {
    expect(zonedRfc3339(new Date("2026-11-28T02:00:00.250Z"), "Europe/Berlin")).toBe(
      "2026-11-28T03:00:00.250+01:00",
    );
    expect(zonedRfc3339(new Date("2026-07-01T22:30:00Z"), "Europe/Berlin")).toBe(
      "2026-07-02T00:30:00.000+02:00",
    );
    expect(zonedRfc3339(new Date("2026-03-01T00:00:00Z"), "Asia/Kolkata")).toBe(
      "2026-03-01T05:30:00.000+05:30",
    );
    expect(zonedRfc3339(new Date("2026-03-01T00:00:00Z"), "UTC")).toBe("2026-03-01T00:00:00.000+00:00");
    expect(zonedRfc3339(new Date("2026-01-15T03:00:00Z"), "America/New_York")).toBe(
      "2026-01-14T22:00:00.000-05:00",
    );
  });

  it("names the same instant it was given", () => {
    for (const zone of ["Europe/Berlin", "Asia/Kolkata", "America/New_York", "Australia/Lord_Howe"]) {
      const at = new Date("2026-10-04T15:45:12.345Z");
      expect(new Date(zonedRfc3339(at, zone)).getTime()).toBe(at.getTime());
    }
  });
});

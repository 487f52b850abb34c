import { describe, expect, it } from "vitest";
import { dueSlot, latestSlot, nextSlot } from "./due-slot.js";

const at = (iso: string) => new Date(iso);

describe("maintenance due slots", () => {
  it("finds the latest occurrence at or before now, counting an occurrence exactly at now", () => {
    expect(latestSlot("0 3 * * *", "UTC", at("2026-11-22T03:00:00.000Z"))).toEqual(
      at("2026-11-22T03:00:00Z"),
    );
    expect(latestSlot("0 3 * * *", "UTC", at("2026-11-22T02:59:59.999Z"))).toEqual(
      at("2026-11-21T03:00:00Z"),
    );
    expect(latestSlot("0 4 * * 0", "UTC", at("2026-11-25T12:00:00Z"))).toEqual(at("2026-11-22T04:00:00Z"));
  });

  it("reads the cadence in the configured zone", () => {
    // 03:00 in Berlin (UTC+1 in November) is 02:00 UTC.
    expect(latestSlot("0 3 * * *", "Europe/Berlin", at("2026-11-22T02:30:00Z"))).toEqual(
      at("2026-11-22T02:00:00Z"),
    );
    expect(nextSlot("0 5 1 * *", "Europe/Berlin", at("2026-11-22T00:00:00Z"))).toEqual(
      at("2026-12-01T04:00:00Z"),
    );
  });

  it("is due only for a slot later than the one dispatched last; missed slots collapse into one", () => {
    const now = at("2026-11-22T03:00:30Z");
    expect(dueSlot("0 3 * * *", "UTC", now, at("2026-11-21T03:00:00Z"))).toEqual(at("2026-11-22T03:00:00Z"));
    expect(dueSlot("0 3 * * *", "UTC", now, at("2026-11-22T03:00:00Z"))).toBeUndefined();
    // Three days down: one run for the latest slot.
    expect(dueSlot("0 3 * * *", "UTC", now, at("2026-11-19T03:00:00Z"))).toEqual(at("2026-11-22T03:00:00Z"));
  });
});

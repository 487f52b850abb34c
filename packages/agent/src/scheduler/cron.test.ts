import { createRequire } from "node:module";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseCron } from "./cron.js";

describe("cron without ICU's locale data", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("computes the next time without constructing an Intl formatter", () => {
    const made = vi.spyOn(Intl, "DateTimeFormat");
    const parsed = parseCron("30 3 * * 1");
    if (!parsed.ok) {
      throw new Error(parsed.reason);
    }
    const next = parsed.next(new Date(2026, 10, 27, 12, 0, 0));
    expect(next).toEqual(new Date(2026, 10, 30, 3, 30, 0));
    expect(made).not.toHaveBeenCalled();
  });

  it("sets the locale on the luxon cron-parser itself loads", () => {
    const ours = createRequire(import.meta.url);
    const cronParsers = createRequire(ours.resolve("cron-parser"));
    expect(cronParsers.resolve("luxon")).toBe(ours.resolve("luxon"));
  });
});

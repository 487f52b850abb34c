import { RECONNECT_BACKOFF } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { createBackoff } from "./backoff.js";

describe("createBackoff", () => {
  it("doubles the ceiling from 1 s up to the 60 s cap", () => {
    const backoff = createBackoff({ random: () => 0.999999 });
    const delays = Array.from({ length: 9 }, () => backoff.next());
    expect(delays).toEqual([999, 1999, 3999, 7999, 15999, 31999, 59999, 59999, 59999]);
  });

  it("uses full jitter: any delay from 0 to the ceiling", () => {
    const low = createBackoff({ random: () => 0 });
    expect([low.next(), low.next(), low.next()]).toEqual([0, 0, 0]);
    const half = createBackoff({ random: () => 0.5 });
    expect([half.next(), half.next(), half.next()]).toEqual([500, 1000, 2000]);
  });

  it("stays within bounds with real randomness", () => {
    const backoff = createBackoff();
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const ceiling = Math.min(RECONNECT_BACKOFF.maxMs, RECONNECT_BACKOFF.initialMs * 2 ** attempt);
      const delay = backoff.next();
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(ceiling);
    }
  });

  it("starts from the bottom again after reset", () => {
    const backoff = createBackoff({ random: () => 0.999999 });
    backoff.next();
    backoff.next();
    backoff.next();
    backoff.reset();
    expect(backoff.next()).toBe(999);
  });
});

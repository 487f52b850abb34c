import { describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { createRateLimiter } from "./rate-limit.js";

describe("rate limiter", () => {
  it("allows the limit per window, then refuses with the seconds left", () => {
    const clock = createManualClock();
    const limiter = createRateLimiter({ limit: 3, windowMs: 60_000, clock });
    expect([1, 2, 3].map(() => limiter.hit("ip").allowed)).toEqual([true, true, true]);
    clock.advance(15_000);
    expect(limiter.hit("ip")).toEqual({ allowed: false, retryAfterSeconds: 45 });
    expect(limiter.hit("other").allowed).toBe(true);
    clock.advance(45_000);
    expect(limiter.hit("ip").allowed).toBe(true);
  });

  it("forgets a key on reset", () => {
    const clock = createManualClock();
    const limiter = createRateLimiter({ limit: 1, windowMs: 60_000, clock });
    limiter.hit("u");
    expect(limiter.hit("u").allowed).toBe(false);
    limiter.reset("u");
    expect(limiter.hit("u").allowed).toBe(true);
  });
});

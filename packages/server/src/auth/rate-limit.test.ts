import { rateLimits } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { createRateLimiter } from "./rate-limit.js";

runDbSuite("rate limiter", (getDb) => {
  const limiter = (clock: ReturnType<typeof createManualClock>, limit: number, scope = "test") =>
    createRateLimiter({ db: getDb(), scope, limit, windowMs: 60_000, clock });

  it("allows the limit per window, then refuses with the seconds left", async () => {
    const clock = createManualClock();
    const ip = limiter(clock, 3);
    const allowed = [];
    for (let i = 0; i < 3; i++) {
      allowed.push((await ip.hit("ip")).allowed);
    }
    expect(allowed).toEqual([true, true, true]);
    clock.advance(15_000);
    expect(await ip.hit("ip")).toEqual({ allowed: false, retryAfterSeconds: 45 });
    expect((await ip.hit("other")).allowed).toBe(true);
    clock.advance(45_000);
    expect((await ip.hit("ip")).allowed).toBe(true);
  });

  it("forgets a key on reset", async () => {
    const clock = createManualClock();
    const user = limiter(clock, 1);
    await user.hit("u");
    expect((await user.hit("u")).allowed).toBe(false);
    await user.reset("u");
    expect((await user.hit("u")).allowed).toBe(true);
  });

  it("is one limit for every replica of a scope, and scopes are apart", async () => {
    const clock = createManualClock();
    const [onA, onB] = [limiter(clock, 2), limiter(clock, 2)];
    expect((await onA.hit("203.0.113.9")).allowed).toBe(true);
    expect((await onB.hit("203.0.113.9")).allowed).toBe(true);
    expect((await onA.hit("203.0.113.9")).allowed).toBe(false);
    expect((await onB.hit("203.0.113.9")).allowed).toBe(false);
    expect((await limiter(clock, 2, "other-scope").hit("203.0.113.9")).allowed).toBe(true);
  });

  it("stores a hash of the key, never the key, and sweeps ended windows", async () => {
    const clock = createManualClock();
    const users = limiter(clock, 5);
    await users.hit("admin@hunter2-typed-as-a-username");
    const rows = await getDb().select().from(rateLimits);
    expect(JSON.stringify(rows)).not.toContain("hunter2");
    expect(rows[0]?.keyHash).toMatch(/^[0-9a-f]{64}$/);
    clock.advance(120_000);
    await users.hit("next");
    expect((await getDb().select().from(rateLimits)).map((row) => row.count)).toEqual([1]);
  });
});

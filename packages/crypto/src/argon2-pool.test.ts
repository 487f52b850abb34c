import { performance } from "node:perf_hooks";
import { argon2id } from "hash-wasm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Argon2Input, type Argon2Pool, createArgon2Pool } from "./argon2-pool.js";

// Cheap parameters: bytes, errors, queueing and the idle stop do not depend on the cost, and at
// production cost (64 MiB, t=3, p=4: half a second a hash when idle, seconds on a loaded machine)
// the idle tests ran past their 30 s timeout (issue 32). Two lanes keep parallelism exercised.
const input = (password: string): Argon2Input => ({
  password,
  salt: new Uint8Array(16).fill(7),
  memorySize: 64,
  iterations: 2,
  parallelism: 2,
  hashLength: 32,
});

let pool: Argon2Pool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
  vi.useRealTimers();
});

/**
 * Only the idle timers are faked: the worker's messages stay real, so a test waits on the hashes it
 * asked for and then moves the pool's clock by hand instead of sleeping until a deadline.
 */
function fakeIdleClock(): void {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
}

describe("argon2 pool", () => {
  it("gives the same bytes as hash-wasm on this thread", async () => {
    pool = createArgon2Pool(1);
    const expected = await argon2id({ ...input("pw"), outputType: "binary" });
    expect(Buffer.from(await pool.hash(input("pw"))).equals(Buffer.from(expected))).toBe(true);
  });

  it("leaves this thread's event loop idle while hashes run", async () => {
    pool = createArgon2Pool(2);
    // 8 MiB each: enough that the hashing, not the messages around it, fills the wait.
    const costly = (password: string) => ({
      ...input(password),
      memorySize: 8_192,
      iterations: 1,
      parallelism: 1,
    });
    const before = performance.eventLoopUtilization();
    await Promise.all(["a", "b", "c"].map((pw) => pool?.hash(costly(pw))));
    const { utilization } = performance.eventLoopUtilization(before);
    // The share of the wait this thread was busy, not a duration, so a loaded machine (which slows
    // the workers and this thread alike) does not move it: hashing here keeps the loop busy the
    // whole time (~1.0), in workers it only handles messages (~0.1).
    expect(utilization).toBeLessThan(0.5);
  });

  it("fails a hash the library refuses and goes on serving", async () => {
    pool = createArgon2Pool(1);
    const bad = pool.hash({ ...input("pw"), memorySize: 1 });
    await expect(bad).rejects.toThrow(/argon2id: /);
    expect((await pool.hash(input("pw"))).length).toBe(32);
  });

  it("stops a worker idle for idleMs, and starts one again for the next hash", async () => {
    fakeIdleClock();
    pool = createArgon2Pool(2, { idleMs: 10_000 });
    await Promise.all([pool.hash(input("a")), pool.hash(input("b"))]);
    expect(pool.workers()).toBe(2);
    vi.advanceTimersByTime(9_999);
    expect(pool.workers()).toBe(2);
    vi.advanceTimersByTime(1);
    expect(pool.workers()).toBe(0);
    const expected = await argon2id({ ...input("d"), outputType: "binary" });
    expect(Buffer.from(await pool.hash(input("d"))).equals(Buffer.from(expected))).toBe(true);
    expect(pool.workers()).toBe(1);
  });

  it("keeps a worker that gets its next hash before the idle time ends", async () => {
    fakeIdleClock();
    pool = createArgon2Pool(1, { idleMs: 10_000 });
    await pool.hash(input("a"));
    for (const pw of ["b", "c", "d"]) {
      // Just short of idleMs each time but past it in all: only an idle time that each hash starts
      // anew keeps the worker.
      vi.advanceTimersByTime(9_999);
      expect(pool.workers()).toBe(1);
      await pool.hash(input(pw));
    }
    vi.advanceTimersByTime(10_000);
    expect(pool.workers()).toBe(0);
  });
});

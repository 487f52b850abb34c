import { monitorEventLoopDelay } from "node:perf_hooks";
import { argon2id } from "hash-wasm";
import { afterEach, describe, expect, it } from "vitest";
import { type Argon2Pool, createArgon2Pool } from "./argon2-pool.js";

const input = (password: string) => ({
  password,
  salt: new Uint8Array(16).fill(7),
  memorySize: 65_536,
  iterations: 3,
  parallelism: 4,
  hashLength: 32,
});

let pool: Argon2Pool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

describe("argon2 pool", () => {
  it("gives the same bytes as hash-wasm on this thread", async () => {
    pool = createArgon2Pool(1);
    const expected = await argon2id({ ...input("pw"), outputType: "binary" });
    expect(Buffer.from(await pool.hash(input("pw"))).equals(Buffer.from(expected))).toBe(true);
  });

  it("keeps the event loop responsive while hashes run", async () => {
    pool = createArgon2Pool(2);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = performance.now();
    await Promise.all(["a", "b", "c"].map((pw) => pool?.hash(input(pw))));
    const elapsedMs = performance.now() - started;
    delay.disable();
    const maxDelayMs = delay.max / 1e6;
    // On this thread one hash blocks the loop for about a third of the three; in workers the
    // loop only ever waits for its own small jobs.
    expect(maxDelayMs).toBeLessThan(elapsedMs / 6);
  });

  it("fails a hash the library refuses and goes on serving", async () => {
    pool = createArgon2Pool(1);
    const bad = pool.hash({ ...input("pw"), memorySize: 1 });
    await expect(bad).rejects.toThrow(/argon2id: /);
    expect((await pool.hash(input("pw"))).length).toBe(32);
  });

  it("stops a worker idle for idleMs, and starts one again for the next hash", async () => {
    pool = createArgon2Pool(2, { idleMs: 300 });
    await Promise.all([pool.hash(input("a")), pool.hash(input("b"))]);
    expect(pool.workers()).toBeGreaterThan(0);
    const deadline = performance.now() + 5_000;
    while (pool.workers() > 0 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(pool.workers()).toBe(0);
    const expected = await argon2id({ ...input("d"), outputType: "binary" });
    expect(Buffer.from(await pool.hash(input("d"))).equals(Buffer.from(expected))).toBe(true);
    expect(pool.workers()).toBe(1);
  });

  it("keeps a worker that gets its next hash before the idle time ends", async () => {
    pool = createArgon2Pool(1, { idleMs: 2_000 });
    await pool.hash(input("a"));
    for (const pw of ["b", "c", "d"]) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await pool.hash(input(pw));
    }
    expect(pool.workers()).toBe(1);
  });
});

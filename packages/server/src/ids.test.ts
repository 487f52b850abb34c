import { decodeTime, isValid } from "ulidx";
import { describe, expect, it } from "vitest";
import { createIds, pooledRandom } from "./ids.js";

describe("ids", () => {
  it("makes valid, distinct ULIDs with the clock's time, past one pool of random bytes", () => {
    const ids = createIds();
    const now = new Date("2026-11-28T12:00:00Z");
    const made = Array.from({ length: 2_000 }, () => ids.ulid(now));
    expect(made.every((id) => isValid(id) && decodeTime(id) === now.getTime())).toBe(true);
    expect(new Set(made).size).toBe(made.length);
  });

  it("keeps job ids in creation order within one millisecond", () => {
    const ids = createIds();
    const now = new Date("2026-11-28T12:00:00Z");
    const made = Array.from({ length: 500 }, () => ids.jobId(now));
    expect([...made].sort()).toEqual(made);
  });

  it("draws every one of the 32 ULID characters, each about equally often", () => {
    const random = pooledRandom();
    const counts = new Array<number>(32).fill(0);
    const draws = 64_000;
    for (let i = 0; i < draws; i++) {
      const value = random();
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
      counts[Math.floor(value * 32)] = (counts[Math.floor(value * 32)] as number) + 1;
    }
    // 2,000 expected per character; a generator stuck on part of the range falls far outside.
    expect(Math.min(...counts)).toBeGreaterThan(1_600);
    expect(Math.max(...counts)).toBeLessThan(2_400);
  });
});

import { describe, expect, it } from "vitest";
import { createFileSample } from "./drill-sample.js";

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe("file sample", () => {
  it("keeps every file when there are fewer than the sample size, in listing order", () => {
    const sample = createFileSample(5, () => 0.99);
    sample.offer({ path: "/a", size: 1 });
    sample.offer({ path: "/b", size: 2 });
    expect(sample.files()).toEqual([
      { path: "/a", size: 1 },
      { path: "/b", size: 2 },
    ]);
    expect(sample.seen).toBe(2);
  });

  it("holds at most the sample size however many files pass", () => {
    const sample = createFileSample(3, seeded(7));
    for (let i = 0; i < 100_000; i += 1) {
      sample.offer({ path: `/f/${i}`, size: i });
    }
    expect(sample.files()).toHaveLength(3);
    expect(sample.seen).toBe(100_000);
    const orders = sample.files().map((file) => file.size);
    expect(orders).toEqual([...orders].sort((a, b) => a - b));
  });

  it("gives every file about the same chance (no bias to the first or last)", () => {
    const hits = new Array<number>(10).fill(0);
    const random = seeded(42);
    for (let round = 0; round < 20_000; round += 1) {
      const sample = createFileSample(2, random);
      for (let i = 0; i < 10; i += 1) {
        sample.offer({ path: `/${i}`, size: i });
      }
      for (const file of sample.files()) {
        hits[file.size] = (hits[file.size] ?? 0) + 1;
      }
    }
    // Each file is drawn 2/10 of the time: 4,000 of 20,000 rounds.
    for (const count of hits) {
      expect(count).toBeGreaterThan(3_600);
      expect(count).toBeLessThan(4_400);
    }
  });
});

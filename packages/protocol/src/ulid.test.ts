/**
 * @module ulid.test
 * The monotonic ULID generator.
 */
import { describe, expect, it } from "vitest";
import { isUlid } from "./formats.js";
import { createUlidGenerator, newMessageId } from "./ulid.js";

function fixedRandom(fill: number): (bytes: Uint8Array) => void {
  return (bytes) => bytes.fill(fill);
}

describe("ULID", () => {
  it("encodes the time and the random part as Crockford base32", () => {
    // Time vector from the ULID specification; all-zero and all-one random parts.
    expect(createUlidGenerator({ now: () => 1469918176385, fillRandom: fixedRandom(0) })()).toBe(
      "01ARYZ6S410000000000000000",
    );
    expect(createUlidGenerator({ now: () => 0, fillRandom: fixedRandom(255) })()).toBe(
      "0000000000ZZZZZZZZZZZZZZZZ",
    );
  });

  it("stays monotonic within one millisecond and when the clock steps back", () => {
    let now = 1_000;
    const next = createUlidGenerator({ now: () => now, fillRandom: fixedRandom(7) });
    const first = next();
    const second = next();
    now = 999;
    const third = next();
    expect([first, second, third].every(isUlid)).toBe(true);
    expect(first < second && second < third).toBe(true);
    expect(third.slice(0, 10)).toBe(first.slice(0, 10));
  });

  it("takes fresh randomness when the millisecond changes", () => {
    let now = 5;
    let calls = 0;
    const next = createUlidGenerator({ now: () => now, fillRandom: () => void calls++ });
    next();
    next();
    now = 6;
    next();
    expect(calls).toBe(2);
  });

  it("refuses to overflow the random part or to encode an impossible time", () => {
    const next = createUlidGenerator({ now: () => 1, fillRandom: fixedRandom(255) });
    next();
    expect(next).toThrow(RangeError);
    expect(createUlidGenerator({ now: () => 2 ** 48 })).toThrow(RangeError);
    expect(createUlidGenerator({ now: () => -1 })).toThrow(RangeError);
  });

  it("newMessageId gives distinct, sorted ULIDs", () => {
    const ids = Array.from({ length: 1000 }, newMessageId);
    expect(ids.every(isUlid)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});

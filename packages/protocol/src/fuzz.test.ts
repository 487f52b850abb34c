/**
 * @module fuzz.test
 * Decode under fast-check attack: it never throws and only returns its typed errors.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decode, encode } from "./codec.js";
import { MAX_FRAME_BYTES } from "./constants.js";
import type { Direction } from "./envelope.js";
import type { DecodeResult } from "./protocol-error.js";
import { DIRECTIONS, loadFixtures } from "./test-fixtures.js";

const fixtures = loadFixtures();
const DECODE_ERROR_CODES = ["invalid_message", "unknown_type"];

/** The contract of decode under attack: no throw, and either a message or one of its two errors. */
function decodesSafely(data: string | Uint8Array, direction?: Direction): DecodeResult<unknown> {
  let result: DecodeResult<unknown> | undefined;
  expect(() => {
    result = direction === undefined ? decode(data) : decode(data, direction);
  }).not.toThrow();
  if (result === undefined) {
    throw new Error("decode returned nothing");
  }
  if (result.ok) {
    // Whatever decode accepts must be encodable again: handlers may echo or store it.
    const { id, type, payload } = result.message as { id: string; type: never; payload: never };
    expect(() => encode(type, payload, id)).not.toThrow();
  } else {
    expect(DECODE_ERROR_CODES).toContain(result.error.code);
    expect(typeof result.error.message).toBe("string");
  }
  return result;
}

const direction = fc.option(fc.constantFrom(...DIRECTIONS), { nil: undefined });
const fixture = fc.constantFrom(...fixtures);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Paths to every value inside a payload, so any field can be swapped for junk. */
function valuePaths(value: unknown, prefix: readonly (string | number)[] = []): (string | number)[][] {
  const here = prefix.length === 0 ? [] : [[...prefix]];
  if (Array.isArray(value)) {
    return [...here, ...value.flatMap((item, i) => valuePaths(item, [...prefix, i]))];
  }
  if (isPlainObject(value)) {
    return [...here, ...Object.entries(value).flatMap(([key, child]) => valuePaths(child, [...prefix, key]))];
  }
  return here;
}

function replaceAt(value: unknown, path: readonly (string | number)[], replacement: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) {
    return replacement;
  }
  if (Array.isArray(value)) {
    return value.map((item, i) => (i === head ? replaceAt(item, rest, replacement) : item));
  }
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, child]) => [
        key,
        key === head ? replaceAt(child, rest, replacement) : child,
      ]),
    );
  }
  return value;
}

const junk = fc.anything({
  maxDepth: 3,
  withNullPrototype: true,
  withObjectString: true,
  key: fc.oneof(fc.string(), fc.constantFrom("__proto__", "constructor", "prototype", "toString")),
});

describe("decode never throws", () => {
  it("on random JSON values", () => {
    fc.assert(
      fc.property(junk, direction, (value, dir) => {
        const text = JSON.stringify(value);
        if (text !== undefined) {
          decodesSafely(text, dir);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("on random envelopes of known and unknown types", () => {
    const types = fc.oneof(fc.constantFrom(...fixtures.map((f) => f.frame.type)), fc.string());
    fc.assert(
      fc.property(types, junk, direction, (type, payload, dir) => {
        decodesSafely(JSON.stringify({ id: "01ARZ3NDEKTSV4RRFFQ69G5FAV", type, payload }) ?? "", dir);
      }),
      { numRuns: 500 },
    );
  });

  it("on random strings and bytes", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.uint8Array()),
        direction,
        (data, dir) => {
          decodesSafely(data, dir);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("on truncated golden frames", () => {
    fc.assert(
      fc.property(fixture, fc.nat(), (f, cut) => {
        // Cut somewhere before the closing brace: only the trailing newline may go unnoticed.
        const text = f.text.slice(0, cut % f.text.trimEnd().length);
        expect(decodesSafely(text, f.direction).ok).toBe(false);
        const bytes = new TextEncoder().encode(f.text);
        decodesSafely(bytes.subarray(0, cut % bytes.length), f.direction);
      }),
      { numRuns: 300 },
    );
  });

  it("on golden frames with one field replaced by a value of any type", () => {
    const mutated = fixture.chain((f) =>
      fc.tuple(fc.constant(f), fc.constantFrom(...valuePaths(f.frame)), junk).map(([g, path, value]) => ({
        direction: g.direction,
        frame: replaceAt(g.frame, path, value),
      })),
    );
    fc.assert(
      fc.property(mutated, ({ direction: dir, frame }) => {
        decodesSafely(JSON.stringify(frame), dir);
      }),
      { numRuns: 1000 },
    );
  });

  it("on strings longer than MAX_FRAME_BYTES, in any field", () => {
    const huge = fc
      .tuple(fc.integer({ min: 1, max: 4096 }), fc.constantFrom("x", "é", "€", "😀"))
      .map(([extra, unit]) => unit.repeat(Math.ceil(MAX_FRAME_BYTES / unit.length) + extra));
    fc.assert(
      fc.property(fixture, huge, (f, line) => {
        const path = ["payload", Object.keys(f.frame.payload)[0] ?? "x"];
        const result = decodesSafely(JSON.stringify(replaceAt(f.frame, path, line)), f.direction);
        expect(result.ok).toBe(false);
        expect(result.ok || result.error.message).toBe(`frame exceeds ${MAX_FRAME_BYTES} bytes`);
      }),
      { numRuns: 10 },
    );
  });
});

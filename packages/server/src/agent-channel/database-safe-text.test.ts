import { describe, expect, it } from "vitest";
import { databaseSafe, mayHoldUnstorable } from "./database-safe-text.js";

describe("databaseSafe", () => {
  it("replaces NUL and lone surrogates in nested strings and keys with U+FFFD", () => {
    const input = {
      current_file: "/srv/a\u0000b",
      paths: ["/ok", "/bad\uD800name", "/pair\uD83D\uDE00ok"],
      summary: { "key\u0000": "\uDC00tail", n: 3, flag: true, none: null },
    };
    expect(databaseSafe(input)).toEqual({
      current_file: "/srv/a\uFFFDb",
      paths: ["/ok", "/bad\uFFFDname", "/pair\uD83D\uDE00ok"],
      summary: { "key\uFFFD": "\uFFFDtail", n: 3, flag: true, none: null },
    });
    // The input is left as it was: the agent's frame may still be logged or compared.
    expect(input.current_file).toBe("/srv/a\u0000b");
  });

  it("returns the very same objects when there is nothing to replace", () => {
    const input = { a: ["x", { b: "ü😀" }], c: 1 };
    expect(databaseSafe(input)).toBe(input);
  });

  it("leaves a surrogate pair, which is one valid character, alone", () => {
    expect(databaseSafe("\uD83D\uDE00")).toBe("\uD83D\uDE00");
  });
});

describe("mayHoldUnstorable", () => {
  const frame = (value: unknown) => Buffer.from(JSON.stringify(value));

  it("is true for a frame whose JSON escapes NUL or a lone surrogate, in a value or a key", () => {
    expect(mayHoldUnstorable(frame({ a: "x\u0000y" }))).toBe(true);
    expect(mayHoldUnstorable(frame({ a: ["\uD800"] }))).toBe(true);
    expect(mayHoldUnstorable(frame({ "k\uDC00": 1 }))).toBe(true);
    expect(mayHoldUnstorable(new Uint8Array(Buffer.from('{"a":"\\u0041"}')))).toBe(true);
  });

  it("is false only where databaseSafe would change nothing", () => {
    const values = [
      { a: "plain", b: ["ü😀", "\uD83D\uDE00"], c: { "tab\tkey": "line\nbreak \\ backslash" }, n: 1 },
      { s: "\u0001 escaped control", t: "x\u0000y" },
      { u: "a literal \\u0000, no NUL" },
    ];
    for (const value of values) {
      const bytes = frame(value);
      const parsed: unknown = JSON.parse(bytes.toString());
      if (!mayHoldUnstorable(bytes)) {
        expect(databaseSafe(parsed)).toBe(parsed);
      }
    }
    expect(mayHoldUnstorable(frame(values[0]))).toBe(false);
    // The part of a larger buffer it was cut from, as ws may hand it over.
    const inner = Buffer.from('xx\\u{"a":1}');
    expect(mayHoldUnstorable(inner.subarray(4))).toBe(false);
  });
});

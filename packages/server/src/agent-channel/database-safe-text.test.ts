import { describe, expect, it } from "vitest";
import { databaseSafe } from "./database-safe-text.js";

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

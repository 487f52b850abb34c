import { describe, expect, it } from "vitest";
import { createLineSplitter, truncationMarker } from "./line-splitter.js";

function split(chunks: (string | Uint8Array)[], max?: number): string[] {
  const lines: string[] = [];
  const splitter = createLineSplitter((line) => lines.push(line), max);
  for (const chunk of chunks) {
    splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  }
  splitter.end();
  return lines;
}

describe("createLineSplitter", () => {
  it("joins lines split across chunks and keeps empty lines", () => {
    expect(split(["created restic repo", "sitory 94e6 at /r\n\nPlease", " note\n"])).toEqual([
      "created restic repository 94e6 at /r",
      "",
      "Please note",
    ]);
  });

  it("emits a last line without newline on end, and nothing for a trailing newline", () => {
    expect(split(["a\nb"])).toEqual(["a", "b"]);
    expect(split(["a\n"])).toEqual(["a"]);
    expect(split([])).toEqual([]);
  });

  it("strips a carriage return before the newline", () => {
    expect(split(["one\r\ntwo\r\n"])).toEqual(["one", "two"]);
  });

  it("keeps UTF-8 sequences split between chunks intact", () => {
    const bytes = Buffer.from("päth/🔑\n");
    const chunks = [...bytes].map((byte) => Uint8Array.of(byte));
    expect(split(chunks)).toEqual(["päth/🔑"]);
  });

  it("truncates a huge line and counts what it dropped, without holding it", () => {
    const huge = "x".repeat(100_000);
    const lines = split([huge.slice(0, 40_000), huge.slice(40_000), "\nnext\n"], 1_000);
    expect(lines).toEqual([`${"x".repeat(1_000)}${truncationMarker(99_000)}`, "next"]);
  });
});

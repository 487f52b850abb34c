import { describe, expect, it } from "vitest";
import { stripTerminalCodes } from "./terminal-text.js";

describe("stripTerminalCodes", () => {
  it("removes the clear-line sequence restic writes before a status line", () => {
    expect(stripTerminalCodes("\x1b[2K[0:01] 45.00%  9 / 20 packs processed")).toBe(
      "[0:01] 45.00%  9 / 20 packs processed",
    );
  });

  it("keeps what a terminal finally shows of a line redrawn with carriage returns", () => {
    expect(stripTerminalCodes("\x1b[2K[0:00] 10.00%\r\x1b[2K[0:01] 100.00%  6 / 6 snapshots\r")).toBe(
      "[0:01] 100.00%  6 / 6 snapshots",
    );
  });

  it("removes colours, cursor moves, titles and stray control characters", () => {
    expect(stripTerminalCodes("\x1b[1;31mFatal:\x1b[0m repository\x1b[1A\x1b]0;title\x07 gone\x07\x08")).toBe(
      "Fatal: repository gone",
    );
  });

  it("leaves ordinary text, tabs and unicode alone", () => {
    const text = 'error: open /srv/file with space.txt:\tpermission denied – "ä"';
    expect(stripTerminalCodes(text)).toBe(text);
  });
});

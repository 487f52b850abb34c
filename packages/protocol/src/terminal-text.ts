/**
 * @module terminal-text
 * restic (and hook scripts) sometimes write terminal control sequences even into a pipe: the
 * status line is cleared with `ESC[2K` and redrawn after a carriage return. A log is read in a
 * browser, where those show up as `[2K` noise, so every line loses them before it is parsed or
 * sent. A line redrawn with `\r` keeps what a terminal would finally show: the last non-empty part.
 * The agent strips every line before it sends it (a `log.stream` line is this text); the server
 * strips again on display, for lines stored from agents that still sent the codes.
 */

// CSI (ESC [ … final), OSC (ESC ] … BEL or ESC \), and the two-character escapes (ESC 7, ESC M, …).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
const ESCAPE_SEQUENCE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_7-9=>c])/g;
// C0 controls other than tab and carriage return, DEL, and the 8-bit CSI.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
const CONTROL = /[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f\x9b]/g;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
const ANY_CONTROL = /[\x00-\x08\x0b-\x1f\x7f\x9b]/;

export function stripTerminalCodes(text: string): string {
  if (!ANY_CONTROL.test(text)) {
    return text;
  }
  const clean = text.replace(ESCAPE_SEQUENCE, "").replace(CONTROL, "");
  if (!clean.includes("\r")) {
    return clean;
  }
  const parts = clean.split("\r").filter((part) => part.trim() !== "");
  return parts.at(-1) ?? "";
}

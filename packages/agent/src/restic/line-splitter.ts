/**
 * @module restic/line-splitter
 * Turns a byte stream into lines. Chunks end anywhere (inside a line, inside a UTF-8 sequence),
 * and a single line can be tens of megabytes (`snapshots --json` prints one array), so a line
 * keeps at most `maxLineLength` characters in memory and the rest is counted, not stored.
 */
import { StringDecoder } from "node:string_decoder";

/** Large enough for `snapshots --json` of a big repository, small enough to bound memory. */
export const DEFAULT_MAX_LINE_LENGTH = 16 * 1024 * 1024;

export interface LineSplitter {
  push(chunk: Uint8Array): void;
  /** Emits a last line that had no newline. */
  end(): void;
}

export function truncationMarker(dropped: number): string {
  return ` [… ${dropped} more characters]`;
}

export function createLineSplitter(
  onLine: (line: string) => void,
  maxLineLength = DEFAULT_MAX_LINE_LENGTH,
): LineSplitter {
  const decoder = new StringDecoder("utf8");
  let parts: string[] = [];
  let kept = 0;
  let dropped = 0;

  const append = (text: string) => {
    const room = maxLineLength - kept;
    if (room <= 0) {
      dropped += text.length;
      return;
    }
    const piece = text.length > room ? text.slice(0, room) : text;
    parts.push(piece);
    kept += piece.length;
    dropped += text.length - piece.length;
  };

  const flush = () => {
    let line = parts.join("");
    if (line.endsWith("\r")) {
      line = line.slice(0, -1);
    }
    onLine(dropped > 0 ? line + truncationMarker(dropped) : line);
    parts = [];
    kept = 0;
    dropped = 0;
  };

  const feed = (text: string) => {
    let start = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
      append(text.slice(start, newline));
      flush();
      start = newline + 1;
    }
    if (start < text.length) {
      append(text.slice(start));
    }
  };

  return {
    push(chunk) {
      feed(decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
    },
    end() {
      feed(decoder.end());
      if (kept > 0 || dropped > 0) {
        flush();
      }
    },
  };
}

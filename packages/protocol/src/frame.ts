/**
 * @module frame
 * From raw WebSocket data to a JSON value, refusing what must never reach validation: frames over
 * MAX_FRAME_BYTES (measured in UTF-8 bytes, before parsing), invalid UTF-8, non-JSON, JSON nested
 * deeper than MAX_JSON_DEPTH (recursive code further on would overflow the stack) and `__proto__`
 * keys (harmless as parsed, but any later assignment or merge would swap the object's prototype).
 */
import { MAX_FRAME_BYTES, MAX_JSON_DEPTH } from "./constants.js";

export type FrameResult = { ok: true; value: unknown } | { ok: false; reason: string };

/** Counts UTF-8 bytes without encoding, stopping as soon as the limit is passed. */
export function utf8ByteLength(text: string, stopAfter = Number.POSITIVE_INFINITY): number {
  let bytes = 0;
  for (let i = 0; i < text.length && bytes <= stopAfter; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) {
      bytes += 1;
    } else if (unit < 0x800) {
      bytes += 2;
    } else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else {
        bytes += 3;
      }
    } else {
      // Other BMP characters, and lone surrogates, which encoders replace by U+FFFD (3 bytes).
      bytes += 3;
    }
  }
  return bytes;
}

/** UTF-8 never takes fewer bytes than UTF-16 code units, nor more than three per unit. */
export function exceedsFrameLimit(text: string): boolean {
  if (text.length > MAX_FRAME_BYTES) {
    return true;
  }
  if (text.length * 3 <= MAX_FRAME_BYTES) {
    return false;
  }
  return utf8ByteLength(text, MAX_FRAME_BYTES) > MAX_FRAME_BYTES;
}

let utf8Decoder: InstanceType<typeof TextDecoder> | undefined;

function decodeUtf8(bytes: Uint8Array): string | undefined {
  utf8Decoder ??= new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  try {
    return utf8Decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Walks the parsed value without recursion, so a hostile depth cannot overflow the stack here. */
export function findUnsafeJson(value: unknown): string | undefined {
  const pending: Array<[object, number]> = [];
  if (typeof value === "object" && value !== null) {
    pending.push([value, 1]);
  }
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (depth > MAX_JSON_DEPTH) {
      return `frame nests deeper than ${MAX_JSON_DEPTH} levels`;
    }
    // Values and keys rather than entries: no pair array per child, which for a 1,000-snapshot
    // report part was most of this walk's cost (issue 19, B5). An array's keys are indexes only.
    if (Array.isArray(node)) {
      for (const child of node as unknown[]) {
        if (typeof child === "object" && child !== null) {
          pending.push([child, depth + 1]);
        }
      }
      continue;
    }
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (key === "__proto__") {
        return "frame contains a __proto__ key";
      }
      const child = record[key];
      if (typeof child === "object" && child !== null) {
        pending.push([child, depth + 1]);
      }
    }
  }
  return undefined;
}

export function readFrame(data: string | Uint8Array): FrameResult {
  let text: string;
  if (typeof data === "string") {
    if (exceedsFrameLimit(data)) {
      return { ok: false, reason: `frame exceeds ${MAX_FRAME_BYTES} bytes` };
    }
    text = data;
  } else {
    if (data.byteLength > MAX_FRAME_BYTES) {
      return { ok: false, reason: `frame exceeds ${MAX_FRAME_BYTES} bytes` };
    }
    const decoded = decodeUtf8(data);
    if (decoded === undefined) {
      return { ok: false, reason: "frame is not valid UTF-8" };
    }
    text = decoded;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: "frame is not JSON" };
  }
  const unsafe = findUnsafeJson(value);
  return unsafe === undefined ? { ok: true, value } : { ok: false, reason: unsafe };
}

/**
 * @module agent-channel/database-safe-text
 * PostgreSQL refuses a NUL character in text and jsonb, and jsonb refuses a lone UTF-16 surrogate
 * ("invalid input syntax for type json"). JSON on the wire carries both (`\u0000`, `\ud800`), and
 * a file name, tag, log line or error from a hostile or odd host may hold them: one such string
 * would fail the whole write (a progress report, a snapshot list, a job's end) and, retried, keep
 * failing. Every string an agent sends is therefore stored with U+FFFD in their place, once, where
 * messages enter the server, rather than at each of the many places that write them.
 */

const NOT_STORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const HAS_UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether a frame's strings may hold what databaseSafe replaces. A frame reaches decoding only as
 * strict UTF-8 JSON (protocol/frame.ts), where neither can appear raw: UTF-8 encodes no lone
 * surrogate and JSON allows no unescaped control character. Both come only from a `\u` escape, so
 * a frame without one needs no walk (a report of 10,000 snapshots holds ~70,000 strings).
 */
export function mayHoldUnstorable(frame: Uint8Array): boolean {
  return Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).includes("\\u");
}

/** The value itself when nothing in it needs replacing (the common case allocates nothing). */
export function databaseSafe<T>(value: T): T {
  return replaceIn(value) as T;
}

function replaceIn(value: unknown): unknown {
  if (typeof value === "string") {
    return HAS_UNSTORABLE.test(value) ? value.replace(NOT_STORABLE, "\uFFFD") : value;
  }
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const replaced = replaceIn(item);
      if (replaced !== item) {
        copy ??= value.slice();
        copy[i] = replaced;
      }
    }
    return copy ?? value;
  }
  if (value !== null && typeof value === "object") {
    let copy: Record<string, unknown> | undefined;
    for (const [key, item] of Object.entries(value)) {
      const replaced = replaceIn(item);
      const safeKey = replaceIn(key) as string;
      if (replaced !== item || safeKey !== key) {
        copy ??= { ...(value as Record<string, unknown>) };
        if (safeKey !== key) {
          delete copy[key];
        }
        copy[safeKey] = replaced;
      }
    }
    return copy ?? value;
  }
  return value;
}

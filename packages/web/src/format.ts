/**
 * @module format
 * Human formats used in pages: sizes in binary units (as restic prints them), durations, and
 * moments as "3 h ago" with the exact time beside them.
 */

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

export function formatBytes(value: unknown): string {
  const bytes = typeof value === "number" ? value : Number(value);
  if (!Number.isFinite(bytes) || bytes < 0) {
    return "–";
  }
  let size = bytes;
  let unit = 0;
  while (size >= 1024 && unit < UNITS.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${size} B` : `${size.toFixed(size < 10 ? 2 : 1)} ${UNITS[unit]}`;
}

export function formatDuration(value: unknown): string {
  const seconds = typeof value === "number" ? value : Number(value);
  if (!Number.isFinite(seconds) || seconds < 0) {
    return "–";
  }
  if (seconds < 60) {
    return `${Math.round(seconds)} s`;
  }
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    return `${minutes} min ${Math.round(seconds % 60)} s`;
  }
  const hours = Math.floor(minutes / 60);
  return `${hours} h ${minutes % 60} min`;
}

function toDate(value: unknown): Date | undefined {
  const date =
    value instanceof Date
      ? value
      : typeof value === "string" || typeof value === "number"
        ? new Date(value)
        : undefined;
  return date && Number.isFinite(date.getTime()) ? date : undefined;
}

/** "2026-11-23 20:41:37 UTC": the exact moment, readable, the same on every server. */
export function formatExactUtc(value: unknown): string {
  const date = toDate(value);
  return date ? `${date.toISOString().slice(0, 19).replace("T", " ")} UTC` : "–";
}

/**
 * How far `value` is from `now` in the largest whole unit: "just now", "5 min ago", "3 h ago",
 * "2 d ago", and "in 3 h" for a moment still to come. Beyond 60 days the date itself says more.
 */
export function formatRelative(value: unknown, now: Date): string {
  const date = toDate(value);
  if (!date) {
    return "–";
  }
  const deltaSeconds = Math.round((now.getTime() - date.getTime()) / 1000);
  const seconds = Math.abs(deltaSeconds);
  if (seconds < 45) {
    return deltaSeconds >= 0 ? "just now" : "in a moment";
  }
  let amount: string;
  if (seconds < 90 * 60) {
    amount = `${Math.max(1, Math.round(seconds / 60))} min`;
  } else if (seconds < 36 * 3600) {
    amount = `${Math.round(seconds / 3600)} h`;
  } else if (seconds < 60 * 86400) {
    amount = `${Math.round(seconds / 86400)} d`;
  } else {
    return date.toISOString().slice(0, 10);
  }
  return deltaSeconds >= 0 ? `${amount} ago` : `in ${amount}`;
}

/** A content hash id (restic's 64 hex digits) longer than this is shown by its first 8 digits. */
const SHORT_ID_LENGTH = 8;

/**
 * The first 8 characters of a long hexadecimal id, as restic itself shortens snapshot ids; any
 * other value as it is (a ULID's first characters are its time, so they would not tell jobs apart).
 */
export function shortId(value: unknown): string {
  const id = typeof value === "string" ? value : String(value ?? "");
  return /^[0-9a-f]{12,}$/i.test(id) ? id.slice(0, SHORT_ID_LENGTH) : id;
}

/** Issue 35.2: a host's or group's protection state (server health/protection.ts) in words. */
const PROTECTION_WORDS: Record<string, string> = {
  no_repository: "no repository",
  no_group: "no group",
  unscheduled: "no schedule",
  never: "never backed up",
};

/**
 * A host-list state in words. The API's `unprotected` (no backup is protecting the data) reads
 * "Not backed up", so it is never taken for deletion protection (a keeper), a separate thing.
 */
export function formatHostState(value: unknown): string {
  const state = String(value ?? "");
  return state === "unprotected" ? "Not backed up" : state.charAt(0).toUpperCase() + state.slice(1);
}

export function formatProtection(value: unknown): string {
  const state = String(value ?? "");
  return PROTECTION_WORDS[state] ?? state;
}

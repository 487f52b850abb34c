/**
 * @module format
 * Human formats used in pages. Sizes, durations and moments live in static/format.js, which the
 * browser's scripts load too, so one definition serves both (issue 36.2); this module gives them
 * their types and adds the formats only templates use.
 */
export { formatBytes, formatDuration, formatIso, formatTime, toDate } from "../static/format.js";

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

/** Issue 35.2: a host's or group's protection state (server freshness/protection.ts) in words. */
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

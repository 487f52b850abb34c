/**
 * @module formats
 * Regular expressions for the string formats of the wire contract. They are exported so that the
 * server can validate operator input (durations, restore targets) with the same rule the agent
 * will apply, instead of a second, drifting copy.
 */

/** Crockford base32, 26 characters; the first one is at most 7 because the timestamp has 48 bits. */
export const ULID_PATTERN = "^[0-7][0-9A-HJKMNP-TV-Z]{25}$";

/** RFC 3339 in UTC only (`Z`): every timestamp on the wire is normalised before it is sent. */
export const RFC3339_UTC_PATTERN =
  "^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d:([0-5]\\d|60)(\\.\\d{1,9})?Z$";

/**
 * A restic duration such as `30d`, `1y6m` or `2y5m7d3h`. restic itself accepts the units in any
 * order; the contract fixes the canonical y-m-d-h order so that equal policies compare equal.
 */
export const RESTIC_DURATION_PATTERN = "^(?=\\d)(\\d+y)?(\\d+m)?(\\d+d)?(\\d+h)?$";

/** restic accepts any unique prefix of a snapshot id; its short ids have 8 hex digits. */
export const SNAPSHOT_ID_PATTERN = "^[0-9a-f]{8,64}$";

/** Paths inside a snapshot are always slash-rooted, also for Windows hosts (`/C/Users/...`). */
export const SNAPSHOT_PATH_PATTERN = "^/";

/**
 * One child name of a directory (the `tree.list` paging cursor): no `/` and no NUL, and neither
 * `.` nor `..`, so that a cursor can never be mistaken for, or smuggle in, a path.
 */
export const TREE_CHILD_NAME_PATTERN = "^(?!\\.\\.?$)[^/\\u0000]+$";

/**
 * A restore target: an absolute path (POSIX or a Windows drive), or one starting with `$HOME`,
 * `${HOME}` or `~/`, which the agent expands at run time. Any other `$` is refused because the
 * agent expands no other variable and a literal one is almost always a mistake.
 */
export const RESTORE_TARGET_PATTERN = "^(/|\\$HOME(?=/|$)|\\$\\{HOME\\}(?=/|$)|~/|[A-Za-z]:[\\\\/])[^$]*$";

/** `n/t`, `x%` or a size with an optional K/M/G/T suffix, as `restic check --read-data-subset`. */
export const READ_DATA_SUBSET_PATTERN = "^(\\d+/\\d+|\\d+(\\.\\d+)?%|\\d+[KMGT]?)$";

/** Lowercase hex, as printed by `sha256sum`. */
export const SHA256_HEX_PATTERN = "^[0-9a-f]{64}$";

/** Standard padded base64 of the 64 bytes of an Ed25519 signature. */
export const ED25519_SIGNATURE_BASE64_PATTERN = "^[A-Za-z0-9+/]{86}==$";

/** The bundle URL is fetched with the agent's bearer token, so only HTTP(S) makes sense. */
export const HTTP_URL_PATTERN = "^https?://[^\\s]+$";

/** An IANA zone name (`UTC`, `Europe/Berlin`, `Etc/GMT+5`): whether the zone exists is the server's call. */
export const TIME_ZONE_PATTERN = "^[A-Za-z0-9_+\\-]+(?:/[A-Za-z0-9_+\\-]+)*$";

/** Standard padded base64 (RFC 4648 section 4), as Node's `Buffer.toString("base64")` writes it. */
export const BASE64_PATTERN = "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$";

const durationRegExp = new RegExp(RESTIC_DURATION_PATTERN);
const restoreTargetRegExp = new RegExp(RESTORE_TARGET_PATTERN);
const ulidRegExp = new RegExp(ULID_PATTERN);

export function isUlid(value: unknown): value is string {
  return typeof value === "string" && ulidRegExp.test(value);
}

export function isResticDuration(value: unknown): value is string {
  return typeof value === "string" && durationRegExp.test(value);
}

export function isRestoreTarget(value: unknown): value is string {
  return typeof value === "string" && restoreTargetRegExp.test(value);
}

/**
 * @module Recognises PostgreSQL constraint violations on either engine, so callers can turn an
 * expected conflict (a duplicate group name, a second open alert) into a value.
 *
 * drizzle wraps driver errors in `DrizzleQueryError` with the driver error as `cause`;
 * postgres.js names the constraint `constraint_name`, PGlite `constraint`.
 */

export interface PgErrorInfo {
  /** SQLSTATE, e.g. 23505. */
  code: string;
  constraint: string | undefined;
}

export const PG_UNIQUE_VIOLATION = "23505";
export const PG_FOREIGN_KEY_VIOLATION = "23503";
export const PG_CHECK_VIOLATION = "23514";
export const PG_NOT_NULL_VIOLATION = "23502";

/** The SQLSTATE and constraint of a database error anywhere in the cause chain, if any. */
export function pgErrorInfo(error: unknown): PgErrorInfo | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const record = current as Record<string, unknown>;
    const code = record.code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) {
      const constraint = record.constraint_name ?? record.constraint;
      return { code, constraint: typeof constraint === "string" ? constraint : undefined };
    }
    current = record.cause;
  }
  return undefined;
}

function isViolation(error: unknown, code: string, constraint: string | undefined): boolean {
  const info = pgErrorInfo(error);
  return info?.code === code && (constraint === undefined || info.constraint === constraint);
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  return isViolation(error, PG_UNIQUE_VIOLATION, constraint);
}

export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  return isViolation(error, PG_FOREIGN_KEY_VIOLATION, constraint);
}

export function isCheckViolation(error: unknown, constraint?: string): boolean {
  return isViolation(error, PG_CHECK_VIOLATION, constraint);
}

/** SQLSTATEs of a lost or refused connection: class 08, and the server shutting down (57P0x). */
const CONNECTION_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[1-3])$/;
/** Driver and socket codes of the same (postgres.js names its own). */
const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/**
 * True when the error (anywhere in its cause chain) says the database could not be reached, not
 * that the query was wrong: the same query may succeed once the database is back, so a caller
 * may retry it.
 */
export function isConnectionError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && typeof current === "object" && current !== null; depth++) {
    const code = (current as Record<string, unknown>).code;
    if (typeof code === "string" && (CONNECTION_SQLSTATE.test(code) || CONNECTION_CODES.has(code))) {
      return true;
    }
    if (current instanceof AggregateError && current.errors.some((inner) => isConnectionError(inner))) {
      return true;
    }
    current = (current as Record<string, unknown>).cause;
  }
  return false;
}

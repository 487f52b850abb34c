/**
 * @module Column helpers shared by every table of the schema.
 *
 * Secrets are stored as `bytea` holding sealed ciphertext produced by @fleetback/crypto; this
 * package never sees plaintext, so the column type is plain bytes.
 */
import { customType, timestamp } from "drizzle-orm/pg-core";

/**
 * `bytea` as `Uint8Array`. postgres.js hands back a Buffer and PGlite a Uint8Array; both are
 * normalised to a plain Uint8Array so callers and tests see one type on either engine.
 */
export const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType() {
    return "bytea";
  },
  toDriver(value) {
    return value;
  },
  fromDriver(value) {
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  },
});

/** A `timestamptz` column read as a `Date`. */
export function timestamptz(name: string) {
  return timestamp(name, { withTimezone: true, mode: "date" });
}

/** `created_at timestamptz not null default now()`. */
export function createdAt() {
  return timestamptz("created_at").notNull().defaultNow();
}

/** `updated_at timestamptz not null default now()`; the writer sets it on every update. */
export function updatedAt() {
  return timestamptz("updated_at").notNull().defaultNow();
}

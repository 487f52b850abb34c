/**
 * @module Transaction-scoped PostgreSQL advisory locks, so that several server replicas never
 * run the same tick or migration at once.
 *
 * Transaction-scoped (`_xact_`) locks are released by COMMIT or ROLLBACK, so a crashed holder
 * can never leave one behind, and they behave the same on a pooled connection and on PGlite.
 */
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { type Database, executeRows, type Transaction } from "./database.js";

/** A stable signed 64-bit lock key for a name: the first 8 bytes of its SHA-256. */
export function advisoryLockKey(name: string): bigint {
  const digest = createHash("sha256").update(`fleetback:${name}`).digest();
  return digest.readBigInt64BE(0);
}

function toKey(key: string | bigint): string {
  if (typeof key === "string") {
    return advisoryLockKey(key).toString();
  }
  if (BigInt.asIntN(64, key) !== key) {
    throw new RangeError(`advisory lock key out of signed 64-bit range: ${key}`);
  }
  return key.toString();
}

/** Blocks until the lock is free; held until the transaction ends. */
export async function acquireAdvisoryXactLock(tx: Transaction, key: string | bigint): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${toKey(key)}::bigint)`);
}

export type AdvisoryLockOutcome<T> = { ran: true; result: T } | { ran: false };

/**
 * Runs `fn` inside a transaction that holds the lock, or does nothing when another session
 * holds it. `fn` must use the `tx` it is given for its queries: on PGlite (one connection) a
 * query through the outer `db` would wait for this very transaction to end.
 */
export async function withAdvisoryLock<T>(
  db: Database,
  key: string | bigint,
  fn: (tx: Transaction) => Promise<T>,
): Promise<AdvisoryLockOutcome<T>> {
  const lockKey = toKey(key);
  return db.transaction(async (tx): Promise<AdvisoryLockOutcome<T>> => {
    const [row] = await executeRows<{ acquired: boolean }>(
      tx,
      sql`select pg_try_advisory_xact_lock(${lockKey}::bigint) as acquired`,
    );
    if (row?.acquired !== true) {
      return { ran: false };
    }
    return { ran: true, result: await fn(tx) };
  });
}

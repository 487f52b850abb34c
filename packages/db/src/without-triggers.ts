/**
 * @module Runs a bulk write with the session's triggers off, which skips the foreign key's check
 * of each row: PGlite spends about a quarter of a large insert on it, PostgreSQL more than half of
 * a 2,000-row INSERT (issue 19, B3 and B5).
 *
 * Safe only while the caller's transaction holds the referenced rows (an UPDATE of them, or
 * SELECT … FOR KEY SHARE) and writes only rows whose parent it found there: then no parent can be
 * deleted under the new rows, which is all the check would have ensured. Needs a superuser, which
 * PGlite always is; on a PostgreSQL role that is not one the checks run as usual. A table written
 * this way must have no trigger of its own (each caller's tests fail when one appears), which
 * this would skip too. The setting is local to the transaction, and a failed write aborts it,
 * which takes the setting with it.
 */
import { sql } from "drizzle-orm";
import { type Database, executeRows } from "./database.js";

export async function withoutTriggers<T>(tx: Database, write: () => Promise<T>): Promise<T> {
  const [role] = await executeRows<{ previous: string; superuser: boolean }>(
    tx,
    sql`select current_setting('session_replication_role') as previous,
               current_setting('is_superuser') = 'on' as superuser`,
  );
  if (!role?.superuser) {
    return write();
  }
  await tx.execute(sql`select set_config('session_replication_role', 'replica', true)`);
  const result = await write();
  await tx.execute(sql`select set_config('session_replication_role', ${role.previous}, true)`);
  return result;
}

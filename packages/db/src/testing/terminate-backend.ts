/**
 * @module Kills the PostgreSQL backend running a test's query, once the server shows it running.
 *
 * A test that stands for a crashed replica starts a long query and terminates its backend. The
 * query may not have reached the server yet when the test gets there, and a terminate that finds
 * nothing lets the query run its full length: so this asks again until it has killed one (the
 * test's timeout bounds a hang).
 */
import { sql } from "drizzle-orm";
import { type Database, executeRows } from "../database.js";

/** Terminates every other backend whose current query contains `marker`; resolves with how many. */
export async function terminateBackendsRunning(db: Database, marker: string): Promise<number> {
  for (;;) {
    const killed = await executeRows(
      db,
      sql`select pg_terminate_backend(pid) from pg_stat_activity
          where query like '%' || ${marker} || '%' and pid <> pg_backend_pid()`,
    );
    if (killed.length > 0) {
      return killed.length;
    }
  }
}

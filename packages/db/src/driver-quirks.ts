/**
 * @module Known faults of the postgres.js driver that callers must recognise.
 *
 * postgres.js 3.4.x (3.4.9 is the latest) can write to a connection's socket after the connection
 * closed, from a setImmediate, when a backend dies under it (pg_terminate_backend, a PostgreSQL
 * restart or failover mid-transaction): a TypeError that escapes every await as an uncaught
 * exception (porsager/postgres#1154, #1208; the fixes are unreleased). The query it belonged to was
 * already rejected with CONNECTION_CLOSED and the pool replaces the connection.
 */

/** The postgres.js write-after-close TypeError, by its message and the frame that threw it. */
export function isPostgresWriteAfterClose(error: unknown): boolean {
  return (
    error instanceof TypeError &&
    /reading 'write'|evaluating 'socket\.write'/.test(error.message) &&
    /[/\\]postgres[/\\]src[/\\]connection\.js/.test(error.stack ?? "")
  );
}

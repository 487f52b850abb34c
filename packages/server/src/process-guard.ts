/**
 * @module process-guard
 * What the server does with an exception nothing caught. The postgres.js write-after-close fault
 * (@fleetback/db driver-quirks.ts) fires when a backend dies under a transaction, as in a
 * PostgreSQL restart or failover; its query already failed and the pool replaces the connection,
 * so that one error is logged and the server carries on instead of dying with the database's
 * blip. Anything else uncaught is logged and the process exits 1, as Node would.
 */
import { isPostgresWriteAfterClose } from "@fleetback/db";
import type { Logger } from "./log.js";

/** Installs the handler; returns the function that removes it. */
export function installProcessGuard(log: Logger, exit: (code: number) => void = process.exit): () => void {
  const onUncaught = (error: Error) => {
    if (isPostgresWriteAfterClose(error)) {
      log.warn(
        { err: error },
        "database connection closed under a write (postgres.js #1154); the query already failed, carrying on",
      );
      return;
    }
    log.fatal({ err: error }, "uncaught exception; exiting");
    exit(1);
  };
  process.on("uncaughtException", onUncaught);
  return () => {
    process.off("uncaughtException", onUncaught);
  };
}

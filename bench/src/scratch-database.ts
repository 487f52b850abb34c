/**
 * @module scratch-database
 * Each PostgreSQL case gets a new, empty database on the server FLEETBACK_BENCH_DATABASE_URL names,
 * and drops it when done: the fleet leaves 1,000 hosts behind, the policy case 10,000, and a case
 * that finds another's rows measures the wrong fleet (or, like the policy case, refuses to run).
 */
import { randomBytes } from "node:crypto";
import { connect, executeRows, IN_MEMORY } from "@fleetback/db";

export interface ScratchDatabase {
  /** The URL of the new database: the given one with its database name replaced. */
  url: string;
  drop(): Promise<void>;
}

async function onServer(serverUrl: string, statement: string): Promise<void> {
  const connection = await connect({ databaseUrl: serverUrl, dataDir: IN_MEMORY });
  try {
    await executeRows(connection.db, statement);
  } finally {
    await connection.close();
  }
}

export async function createScratchDatabase(serverUrl: string): Promise<ScratchDatabase> {
  const name = `fleetback_bench_${randomBytes(6).toString("hex")}`;
  await onServer(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    // WITH (FORCE): a server child killed a moment ago may still hold a connection.
    drop: () => onServer(serverUrl, `drop database if exists ${name} with (force)`),
  };
}

/** Runs `use` on a scratch database of `serverUrl`, or on PGlite when there is none. */
export async function onScratchDatabase<T>(
  serverUrl: string | undefined,
  use: (databaseUrl: string | undefined) => Promise<T>,
): Promise<T> {
  if (serverUrl === undefined) {
    return use(undefined);
  }
  const scratch = await createScratchDatabase(serverUrl);
  try {
    return await use(scratch.url);
  } finally {
    await scratch.drop();
  }
}

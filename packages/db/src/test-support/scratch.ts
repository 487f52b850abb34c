/**
 * @module Throw-away directories and connections for tests of this package, cleaned up however
 * the test ends, so a failed assertion leaves no data dir behind nor an embedded database open.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ConnectConfig, type Connection, connect } from "../connect.js";

/** Runs `use` with a new directory under the OS temp dir named `<prefix>…`, removed afterwards. */
export async function withTempDir<T>(prefix: string, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  try {
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs `use` with a connection opened by `connect(config)`, closed afterwards. */
export async function withConnection<T>(
  config: ConnectConfig,
  use: (connection: Connection) => Promise<T>,
): Promise<T> {
  const connection = await connect(config);
  try {
    return await use(connection);
  } finally {
    await connection.close();
  }
}

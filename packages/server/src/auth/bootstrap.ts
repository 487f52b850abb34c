/**
 * @module auth/bootstrap
 * Creating the first admin. While no user exists the server holds one bootstrap token (from
 * FLEETBACK_BOOTSTRAP_TOKEN or random, printed once at start); it creates exactly one admin
 * and is then burned, even when two requests race for it.
 */
import { constantTimeEqual, randomToken } from "@fleetback/crypto";
import { advisoryLockKey, type Database, type User } from "@fleetback/db";
import { sql } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import { RequestError } from "../errors.js";
import { countUsers, createUser } from "./users.js";

export interface BootstrapState {
  /** The token while bootstrap is possible; undefined once an admin exists. */
  readonly token: string | undefined;
  matches(candidate: string): boolean;
  burn(): void;
}

export async function createBootstrapState(
  db: Database,
  configured: string | undefined,
): Promise<BootstrapState> {
  let token = (await countUsers(db)) === 0 ? (configured ?? randomToken("fbb")) : undefined;
  return {
    get token() {
      return token;
    },
    matches(candidate) {
      return token !== undefined && constantTimeEqual(candidate, token);
    },
    burn() {
      token = undefined;
    },
  };
}

const BOOTSTRAP_LOCK = advisoryLockKey("bootstrap");

export async function bootstrapFirstAdmin(
  deps: Pick<ServerDeps, "db" | "clock" | "ids">,
  state: BootstrapState,
  input: { bootstrapToken: string; username: string; password: string },
): Promise<User> {
  if (!state.matches(input.bootstrapToken)) {
    throw new RequestError("unauthorised", "bootstrap_token: not valid, or an admin already exists");
  }
  const user = await deps.db.transaction(async (tx) => {
    // Serialises racing bootstraps (also across server replicas sharing one database).
    await tx.execute(sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`);
    if ((await countUsers(tx)) > 0) {
      return undefined;
    }
    return createUser(tx, deps, { username: input.username, password: input.password, role: "admin" });
  });
  state.burn();
  if (!user) {
    throw new RequestError("conflict", "An admin already exists; sign in instead.");
  }
  return user;
}

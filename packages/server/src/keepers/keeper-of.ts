/**
 * @module keepers/keeper-of
 * Who maintains a host's repository (issue 33). A host with a keeper is protected: it holds only
 * its append-and-read credential, and the kinds below run on the keeper's agent with the
 * repository's delete-capable credential pushed for each job alone. A host without one keeps
 * today's behaviour and counts as not protected against deletion from the host.
 */
import { type Database, hosts } from "@fleetback/db";
import type { CommandRun } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";

/** Upkeep and mirror copies: every kind that deletes, or needs what deletes, runs on the keeper. */
export const KEPT_KINDS: readonly CommandRun["kind"][] = ["forget", "prune", "check", "unlock", "copy"];

export interface Keeper {
  id: string;
  name: string;
  /** Null until the keeper's first hello. */
  protocolVersion: number | null;
}

const keeperHost = alias(hosts, "keeper");

/** The host's keeper, or undefined when the host is not protected (or gone). */
export async function keeperOf(db: Database, hostId: string): Promise<Keeper | undefined> {
  const [row] = await db
    .select({ id: keeperHost.id, name: keeperHost.name, protocolVersion: keeperHost.protocolVersion })
    .from(hosts)
    .innerJoin(keeperHost, eq(keeperHost.id, hosts.keeperHostId))
    .where(eq(hosts.id, hostId));
  return row;
}

/** Whether a command of this kind goes to the keeper of a protected host (a mirror's upkeep too). */
export function runsOnKeeper(command: CommandRun): boolean {
  return KEPT_KINDS.includes(command.kind);
}

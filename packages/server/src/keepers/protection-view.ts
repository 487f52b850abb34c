/**
 * @module keepers/protection-view
 * What the host page, the dashboard, the API and `/metrics` say about deletion protection: a
 * host's keeper and the hosts it keeps, and the fleet's exposure as one number (hosts not
 * protected against deletion from the host). One query each, so every surface counts alike.
 */
import { type Database, hosts } from "@fleetback/db";
import { KEEPER_PROTOCOL_VERSION } from "@fleetback/protocol";
import { and, asc, count, eq, gte, isNotNull, ne } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { heldHostCount } from "../holds/deletion-holds.js";

export interface HostRef {
  id: string;
  name: string;
}

export interface Protection {
  keeper: HostRef | null;
  /** Hosts whose repositories this host keeps. */
  keeps: HostRef[];
}

const keeperHost = alias(hosts, "keeper");

export async function protectionOf(db: Database, hostId: string): Promise<Protection> {
  const [row] = await db
    .select({ id: keeperHost.id, name: keeperHost.name })
    .from(hosts)
    .innerJoin(keeperHost, eq(keeperHost.id, hosts.keeperHostId))
    .where(eq(hosts.id, hostId));
  const keeps = await db
    .select({ id: hosts.id, name: hosts.name })
    .from(hosts)
    .where(eq(hosts.keeperHostId, hostId))
    .orderBy(asc(hosts.name));
  return { keeper: row ?? null, keeps };
}

export function protectionJson(protection: Protection) {
  return { protected: protection.keeper !== null, keeper: protection.keeper, keeps: protection.keeps };
}

/** Agents that can keep this host's repository: another host whose agent speaks protocol 12. */
export async function keeperCandidates(db: Database, hostId: string): Promise<HostRef[]> {
  return db
    .select({ id: hosts.id, name: hosts.name })
    .from(hosts)
    .where(and(ne(hosts.id, hostId), gte(hosts.protocolVersion, KEEPER_PROTOCOL_VERSION)))
    .orderBy(asc(hosts.name));
}

export interface ProtectionCounts {
  hosts: number;
  protected: number;
  /** Hosts that hold what it takes to delete their own backups. */
  unprotected: number;
  /** Hosts with an open deletion hold (holds/): no forget or prune runs for them. */
  held: number;
}

export async function protectionCounts(db: Database): Promise<ProtectionCounts> {
  const [all] = await db.select({ n: count() }).from(hosts);
  const [kept] = await db.select({ n: count() }).from(hosts).where(isNotNull(hosts.keeperHostId));
  const total = Number(all?.n ?? 0);
  const protectedHosts = Number(kept?.n ?? 0);
  return {
    hosts: total,
    protected: protectedHosts,
    unprotected: total - protectedHosts,
    held: await heldHostCount(db),
  };
}

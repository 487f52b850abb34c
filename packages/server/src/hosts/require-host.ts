/**
 * @module hosts/require-host
 * A host by id or a 404: what every host-scoped route and domain function checks first.
 */
import { type Database, hosts } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { notFound } from "../errors.js";

export async function requireHost(db: Database, hostId: string) {
  const [host] = await db.select().from(hosts).where(eq(hosts.id, hostId)).limit(1);
  if (!host) {
    throw notFound(`No host ${hostId}`);
  }
  return host;
}

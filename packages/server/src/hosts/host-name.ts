/**
 * @module hosts/host-name
 * A host's enrolled name for a notification or a log line; its id when the host is gone.
 */
import { type Database, hosts } from "@fleetback/db";
import { eq } from "drizzle-orm";

export async function hostNameOf(db: Database, hostId: string): Promise<string> {
  const [host] = await db.select({ name: hosts.name }).from(hosts).where(eq(hosts.id, hostId));
  return host?.name ?? hostId;
}

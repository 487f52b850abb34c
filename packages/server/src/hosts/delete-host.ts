/**
 * @module hosts/delete-host
 * Removing a host: its row goes (credentials, groups, jobs and snapshots cascade), which also
 * revokes its agent token, and its live socket is closed with 4003 so the agent stops for good.
 */
import { type Database, hosts } from "@fleetback/db";
import { CLOSE_CODES, ERROR_CODES } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { notFound } from "../errors.js";
import type { AgentHub } from "../hub/types.js";

export async function deleteHost(
  deps: { db: Database; hub: AgentHub },
  hostId: string,
): Promise<{ name: string }> {
  const [deleted] = await deps.db.delete(hosts).where(eq(hosts.id, hostId)).returning({ name: hosts.name });
  if (!deleted) {
    throw notFound(`No host ${hostId}`);
  }
  deps.hub.send(hostId, "error", {
    code: ERROR_CODES.hostDeleted,
    message: "This host was removed from the server.",
  });
  deps.hub.disconnect(hostId, CLOSE_CODES.hostDeleted, "host deleted");
  return deleted;
}

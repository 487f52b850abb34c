/**
 * @module hosts/delete-host
 * Removing a host: its row goes (credentials, groups, jobs and snapshots cascade), which also
 * revokes its agent token, and its live socket is closed with 4003 so the agent stops for good.
 * A keeper that still keeps a host is not removed (keepers/).
 */
import { hosts } from "@fleetback/db";
import { CLOSE_CODES, ERROR_CODES } from "@fleetback/protocol";
import { asc, eq } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { conflict, notFound } from "../errors.js";

export async function deleteHost(
  deps: Pick<ServerDeps, "db" | "hub" | "clock" | "ids">,
  audit: AuditContext,
  hostId: string,
): Promise<{ name: string }> {
  const deleted = await deps.db.transaction(async (tx) => {
    // A keeper's hosts would lose their protection without anybody deciding it (keepers/).
    const kept = await tx
      .select({ name: hosts.name })
      .from(hosts)
      .where(eq(hosts.keeperHostId, hostId))
      .orderBy(asc(hosts.name))
      .limit(6);
    if (kept.length > 0) {
      const names = kept
        .slice(0, 5)
        .map((row) => row.name)
        .join(", ");
      throw conflict(
        `This host keeps the repositories of ${names}${kept.length > 5 ? " and more" : ""}; give them another keeper (or none) first.`,
      );
    }
    const [row] = await tx.delete(hosts).where(eq(hosts.id, hostId)).returning({ name: hosts.name });
    if (!row) {
      throw notFound(`No host ${hostId}`);
    }
    await writeAudit(tx, deps, {
      ...audit,
      action: "host.delete",
      targetKind: "host",
      targetId: hostId,
      details: { name: row.name },
    });
    return row;
  });
  deps.hub.send(hostId, "error", {
    code: ERROR_CODES.hostDeleted,
    message: "This host was removed from the server.",
  });
  deps.hub.disconnect(hostId, CLOSE_CODES.hostDeleted, "host deleted");
  return deleted;
}

/**
 * @module hosts/host-audit
 * Audit entries the host page shows about the host itself: hostname changes its agent reported.
 * The page shows the last few only; the audit page keeps them all.
 */
import { auditLog, type Database } from "@fleetback/db";
import { and, desc, eq } from "drizzle-orm";

/** Written with the host (actor kind `agent`) as the actor when a hello names another hostname. */
export const HOSTNAME_CHANGED_ACTION = "host.hostname_changed";

const SHOWN_CHANGES = 5;

export interface HostnameChange {
  from: string;
  to: string;
  at: Date;
}

export async function recentHostnameChanges(db: Database, hostId: string): Promise<HostnameChange[]> {
  const rows = await db
    .select({ at: auditLog.at, details: auditLog.details })
    .from(auditLog)
    .where(
      and(
        eq(auditLog.targetKind, "host"),
        eq(auditLog.targetId, hostId),
        eq(auditLog.action, HOSTNAME_CHANGED_ACTION),
      ),
    )
    .orderBy(desc(auditLog.id))
    .limit(SHOWN_CHANGES);
  return rows.map((row) => {
    const details = row.details as { from?: unknown; to?: unknown };
    return { from: String(details.from ?? ""), to: String(details.to ?? ""), at: row.at };
  });
}

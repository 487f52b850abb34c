/**
 * @module hosts/rename-host
 * Renames a host: the name pages, alerts and the in-place restore confirmation use. Validated as
 * an enrolled name is (what an agent's hello may report), and unique in the fleet regardless of
 * case, since a restore confirmed by typing a name must name one host. The restic hostname its
 * backups are made under does not change: the history stays one. Audited as host.rename with the
 * old and the new name.
 */

import { type Database, hosts } from "@fleetback/db";
import { HOSTNAME_MAX_LENGTH } from "@fleetback/protocol";
import { and, eq, ne, sql } from "drizzle-orm";
import { Type } from "typebox";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { Clock } from "../clock.js";
import { conflict, RequestError } from "../errors.js";
import type { Ids } from "../ids.js";
import { requireHost } from "./require-host.js";

export const HOST_RENAME_ACTION = "host.rename";

export const RenameHostBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: HOSTNAME_MAX_LENGTH }) },
  { additionalProperties: false },
);

/** No control characters, and no space at either end (it could not be typed back to confirm). */
function nameProblem(name: string): string | undefined {
  if (/\p{Cc}/u.test(name)) {
    return "name: may not contain control characters";
  }
  if (name.trim() !== name) {
    return "name: may not start or end with a space";
  }
  return undefined;
}

export async function renameHost(
  deps: { db: Database; clock: Clock; ids: Ids },
  audit: AuditContext,
  hostId: string,
  name: string,
): Promise<{ id: string; name: string }> {
  const problem = nameProblem(name);
  if (problem) {
    throw new RequestError("invalid", problem, { details: [{ field: "name", message: problem.slice(6) }] });
  }
  return deps.db.transaction(async (tx) => {
    const host = await requireHost(tx, hostId);
    if (host.name === name) {
      return { id: host.id, name };
    }
    const [taken] = await tx
      .select({ id: hosts.id })
      .from(hosts)
      .where(and(ne(hosts.id, host.id), eq(sql`lower(${hosts.name})`, name.toLowerCase())))
      .limit(1);
    if (taken) {
      throw conflict(`name: another host is already named ${name}`, [
        { field: "name", message: "another host has this name" },
      ]);
    }
    await tx.update(hosts).set({ name }).where(eq(hosts.id, host.id));
    await writeAudit(tx, deps, {
      ...audit,
      action: HOST_RENAME_ACTION,
      targetKind: "host",
      targetId: host.id,
      details: { from: host.name, to: name },
    });
    return { id: host.id, name };
  });
}

/**
 * @module keepers/keeper-assignment
 * An admin designates the keeper of a host's repository, or removes it (issue 33). Protecting a
 * host withdraws its delete authority at once (protection-push.ts); removing the keeper gives the
 * host back its admin slot, today's behaviour. Both are audited. A keeper must speak protocol 12:
 * an older agent would take another host's credentials for its own.
 */
import { hosts } from "@fleetback/db";
import { KEEPER_PROTOCOL_VERSION } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { conflict, invalid, notFound } from "../errors.js";
import { readHostCredentials } from "../hosts/credentials.js";
import { gateSlots } from "../hosts/login-password-gate.js";
import { withdrawalFrames } from "./protection-push.js";

type AssignDeps = Pick<ServerDeps, "db" | "keys" | "log" | "hub" | "clock" | "ids">;

export interface KeeperChange {
  hostId: string;
  keeperHostId: string | null;
  /** Whether the host's agent was told at once (it is told at its next hello anyway). */
  pushed: boolean;
}

async function hostRow(deps: AssignDeps, hostId: string) {
  const [row] = await deps.db
    .select({
      id: hosts.id,
      name: hosts.name,
      protocolVersion: hosts.protocolVersion,
      keeperHostId: hosts.keeperHostId,
    })
    .from(hosts)
    .where(eq(hosts.id, hostId));
  return row;
}

/** Tells the host's agent what its slots may hold now; false when it is not connected. */
async function pushProtection(
  deps: AssignDeps,
  hostId: string,
  protocolVersion: number | null,
  protectedNow: boolean,
): Promise<boolean> {
  if (!deps.hub.isOnline(hostId)) {
    return false;
  }
  const { pushable } = gateSlots(await readHostCredentials(deps, hostId), protocolVersion);
  if (protectedNow) {
    return withdrawalFrames(protocolVersion, pushable.repo).every((frame) =>
      deps.hub.send(hostId, "config.update", frame),
    );
  }
  return (
    pushable.admin === undefined ||
    deps.hub.send(hostId, "config.update", { slot: "admin", repository: pushable.admin })
  );
}

export async function setKeeper(
  deps: AssignDeps,
  audit: AuditContext,
  hostId: string,
  keeperHostId: string | null,
): Promise<KeeperChange> {
  const host = await hostRow(deps, hostId);
  if (!host) {
    throw notFound(`No host ${hostId}`);
  }
  if (keeperHostId !== null) {
    if (keeperHostId === hostId) {
      throw invalid("keeper_host_id: a host cannot keep its own repository; pick another agent");
    }
    const keeper = await hostRow(deps, keeperHostId);
    if (!keeper) {
      throw invalid(`keeper_host_id: no host ${keeperHostId}`);
    }
    if ((keeper.protocolVersion ?? 0) < KEEPER_PROTOCOL_VERSION) {
      throw conflict(
        `keeper_host_id: ${keeper.name}'s agent speaks protocol ${keeper.protocolVersion ?? "unknown (it never connected)"}; a keeper needs ${KEEPER_PROTOCOL_VERSION} or later: update it first`,
      );
    }
  }
  if (host.keeperHostId === keeperHostId) {
    return { hostId, keeperHostId, pushed: false };
  }
  await deps.db.transaction(async (tx) => {
    await tx.update(hosts).set({ keeperHostId, updatedAt: deps.clock.now() }).where(eq(hosts.id, hostId));
    await writeAudit(tx, deps, {
      ...audit,
      action: keeperHostId === null ? "host.keeper.remove" : "host.keeper.set",
      targetKind: "host",
      targetId: hostId,
      details: { from: host.keeperHostId, to: keeperHostId },
    });
  });
  const pushed = await pushProtection(deps, hostId, host.protocolVersion, keeperHostId !== null);
  deps.log.info({ host_id: hostId, keeper_host_id: keeperHostId, pushed }, "keeper changed");
  return { hostId, keeperHostId, pushed };
}

/**
 * @module hosts/bandwidth
 * Host-wide upload and download caps (KiB/s, null = no cap): stored on the host and pushed to a
 * connected agent at once, as a `config.update` with the caps alone.
 */
import { hosts } from "@fleetback/db";
import type { Caps } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { capsOf } from "./host-push.js";

export interface BandwidthCaps {
  upKbps: number | null;
  downKbps: number | null;
}

export type SetBandwidthResult =
  | { ok: true; caps: Caps; pushed: boolean }
  | { ok: false; reason: "host_not_found" }
  | { ok: false; reason: "invalid"; errors: string[] };

function isCap(value: number | null): boolean {
  return value === null || (Number.isSafeInteger(value) && value >= 1);
}

export async function setHostBandwidth(
  deps: Pick<ServerDeps, "db" | "hub" | "clock" | "ids">,
  audit: AuditContext,
  hostId: string,
  caps: BandwidthCaps,
): Promise<SetBandwidthResult> {
  const errors: string[] = [];
  if (!isCap(caps.upKbps)) {
    errors.push("up_kbps: must be a whole number of KiB/s, at least 1, or null for no cap");
  }
  if (!isCap(caps.downKbps)) {
    errors.push("down_kbps: must be a whole number of KiB/s, at least 1, or null for no cap");
  }
  if (errors.length > 0) {
    return { ok: false, reason: "invalid", errors };
  }
  const host = await deps.db.transaction(async (tx) => {
    const [updated] = await tx
      .update(hosts)
      .set({ bandwidthUpKbps: caps.upKbps, bandwidthDownKbps: caps.downKbps, updatedAt: deps.clock.now() })
      .where(eq(hosts.id, hostId))
      .returning({ bandwidthUpKbps: hosts.bandwidthUpKbps, bandwidthDownKbps: hosts.bandwidthDownKbps });
    if (updated) {
      await writeAudit(tx, deps, {
        ...audit,
        action: "host.bandwidth.update",
        targetKind: "host",
        targetId: hostId,
        details: { up_kbps: caps.upKbps, down_kbps: caps.downKbps },
      });
    }
    return updated;
  });
  if (!host) {
    return { ok: false, reason: "host_not_found" };
  }
  const wire = capsOf(host);
  return { ok: true, caps: wire, pushed: deps.hub.send(hostId, "config.update", { caps: wire }) };
}

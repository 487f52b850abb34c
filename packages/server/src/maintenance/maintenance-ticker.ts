/**
 * @module maintenance/maintenance-ticker
 * Every FLEETBACK_MAINTENANCE_INTERVAL (config.ts, 60 s) the due forget, prune, check and drill runs are decided
 * under an advisory lock. A due slot is recorded as taken in the same transaction whatever comes
 * of it, so neither a second replica nor a restarted server dispatches it again. Then:
 *   - an offline host is skipped and nothing is queued (the next slot is the next chance);
 *   - prune without admin credentials is skipped silently;
 *   - forget with no group that has a retention policy is skipped (nothing to keep by);
 *   - a drill is skipped when the agent is older than DRILL_PROTOCOL_VERSION (it would refuse the
 *     kind) or the host has no cached snapshot; both are logged with their reason;
 *   - a kind already queued or running on the host is not stacked;
 *   - else the job is created with actor `system` and sent after the commit (forget, prune,
 *     check, drill in that order, so a prune due with a forget cleans up what the forget released,
 *     and a drill reads what is left).
 */
import { hostCredentials, hosts, type Maintenance, maintenance, withAdvisoryLock } from "@fleetback/db";
import { eq, sql } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import { KEPT_KINDS } from "../keepers/keeper-of.js";
import { drillPlanOf } from "./drill-plan.js";
import { dueSlot } from "./due-slot.js";
import {
  activeJobOf,
  dispatchMaintenance,
  forgetGroupsOf,
  type MaintenancePlan,
} from "./maintenance-jobs.js";
import { cadenceOf, MAINTENANCE_KINDS, type MaintenanceKind } from "./maintenance-record.js";

type TickDeps = Pick<ServerDeps, "db" | "keys" | "log" | "hub" | "clock" | "ids" | "notifier"> & {
  config: { timeZone: string; forgetHoldShare: number };
};

export type SkipReason =
  | "offline"
  // A protected host's upkeep runs on its keeper (keepers/), which is offline or too old.
  | "keeper_offline"
  | "keeper_needs_upgrade"
  // A protected host's forget is planned by the server (retention/host-retention.ts).
  | "nothing_to_forget"
  | "retention_refused"
  // A deletion hold (holds/) stands, or this plan opened one.
  | "forget_held"
  | "deletion_held"
  | "no_admin_credentials"
  // A policy forget on a repository shared with other machines needs an agent that keeps it to
  // this host's snapshots (jobs/owner-command.ts).
  | "shared_repository_old_agent"
  | "no_retention_policy"
  | "already_active"
  | "agent_too_old"
  | "no_snapshot";

export interface MaintenanceTickReport {
  dispatched: Array<{ hostId: string; kind: MaintenanceKind; jobId: string }>;
  skipped: Array<{ hostId: string; kind: MaintenanceKind; reason: SkipReason }>;
}

const SLOT_COLUMN = {
  forget: "lastForgetSlotAt",
  prune: "lastPruneSlotAt",
  check: "lastCheckSlotAt",
  drill: "lastDrillSlotAt",
} as const satisfies Record<MaintenanceKind, keyof Maintenance>;

export async function maintenanceTick(deps: TickDeps, now: Date): Promise<MaintenanceTickReport> {
  const report: MaintenanceTickReport = { dispatched: [], skipped: [] };
  const decided = await withAdvisoryLock(deps.db, "maintenance-ticker", async (tx) => {
    // Records are created on first read; a host enrolled since the last tick gets its own now,
    // and its cadences count from this moment.
    const stamp = now.toISOString();
    await tx.execute(
      sql`insert into ${maintenance} (host_id, created_at, updated_at)
          select ${hosts.id}, ${stamp}::timestamptz, ${stamp}::timestamptz from ${hosts}
          on conflict (host_id) do nothing`,
    );
    const rows = await tx
      .select({
        record: maintenance,
        adminSealed: hostCredentials.adminSealed,
        keeperHostId: hosts.keeperHostId,
      })
      .from(maintenance)
      .innerJoin(hosts, eq(hosts.id, maintenance.hostId))
      .leftJoin(hostCredentials, eq(hostCredentials.hostId, maintenance.hostId));
    const plans: Array<{ hostId: string; plan: MaintenancePlan }> = [];
    for (const { record, adminSealed, keeperHostId } of rows) {
      const taken: Partial<Record<(typeof SLOT_COLUMN)[MaintenanceKind], Date>> = {};
      for (const kind of MAINTENANCE_KINDS) {
        const { cron, enabled } = cadenceOf(record, kind);
        if (!enabled) {
          continue;
        }
        const after = record[SLOT_COLUMN[kind]] ?? record.createdAt;
        const slot = dueSlot(cron, deps.config.timeZone, now, after);
        if (!slot) {
          continue;
        }
        taken[SLOT_COLUMN[kind]] = slot;
        const skip = (reason: SkipReason) => report.skipped.push({ hostId: record.hostId, kind, reason });
        // A protected host's upkeep runs on its keeper (keepers/): that agent must be there.
        const runner = keeperHostId !== null && KEPT_KINDS.includes(kind) ? keeperHostId : record.hostId;
        if (!deps.hub.isOnline(runner)) {
          skip(runner === record.hostId ? "offline" : "keeper_offline");
          continue;
        }
        if (kind === "prune" && !adminSealed) {
          skip("no_admin_credentials");
          continue;
        }
        if (await activeJobOf(tx, record.hostId, kind)) {
          skip("already_active");
          continue;
        }
        const plan: MaintenancePlan = { kind };
        if (kind === "forget") {
          plan.forgetGroups = await forgetGroupsOf(tx, record.hostId);
          if (plan.forgetGroups.length === 0) {
            skip("no_retention_policy");
            continue;
          }
        }
        if (kind === "check" && record.checkReadDataSubset) {
          plan.readDataSubset = record.checkReadDataSubset;
        }
        if (kind === "drill") {
          const drill = await drillPlanOf(tx, record.hostId, record.drillSampleFiles);
          if (!drill.ok) {
            skip(drill.reason);
            continue;
          }
          plan.drill = drill.drill;
        }
        plans.push({ hostId: record.hostId, plan });
      }
      if (Object.keys(taken).length > 0) {
        await tx
          .update(maintenance)
          .set({ ...taken, updatedAt: now })
          .where(eq(maintenance.hostId, record.hostId));
      }
    }
    return plans;
  });
  if (!decided.ran) {
    return report;
  }
  for (const { hostId, plan } of decided.result) {
    const sent = await dispatchMaintenance(deps, hostId, plan, { kind: "system" });
    if (sent.ok) {
      report.dispatched.push({ hostId, kind: plan.kind as MaintenanceKind, jobId: sent.job.id });
    } else {
      report.skipped.push({
        hostId,
        kind: plan.kind as MaintenanceKind,
        reason:
          sent.reason === "offline" ||
          sent.reason === "shared_repository_old_agent" ||
          sent.reason === "keeper_offline" ||
          sent.reason === "keeper_needs_upgrade" ||
          sent.reason === "nothing_to_forget" ||
          sent.reason === "retention_refused" ||
          sent.reason === "forget_held" ||
          sent.reason === "deletion_held"
            ? sent.reason
            : sent.reason === "login_needs_agent_upgrade"
              ? "agent_too_old"
              : "no_admin_credentials",
      });
    }
  }
  for (const skipped of report.skipped) {
    if (skipped.reason !== "no_admin_credentials") {
      deps.log.info(
        { host_id: skipped.hostId, kind: skipped.kind, reason: skipped.reason },
        "maintenance run skipped",
      );
    }
  }
  return report;
}

/**
 * @module policies/maintenance-plan
 * The maintenance and drill cadences policies give hosts (issue 37.2), planned and written like
 * their groups (fleet-plan.ts, apply-plan.ts): each field from the highest-priority matching
 * policy that sets it, never over a field the host set itself, and a field a policy gave but none
 * gives any more back to its default. Written through maintenancePatch, so a changed cadence
 * starts counting from now as an operator's edit does.
 */
import { type Database, maintenance } from "@fleetback/db";
import { eq, inArray } from "drizzle-orm";
import type { Labels } from "../labels/label-rules.js";
import {
  getMaintenance,
  MAINTENANCE_DEFAULTS,
  type MaintenanceBody,
  maintenancePatch,
  maintenanceValues,
} from "../maintenance/maintenance-record.js";
import {
  type ActivePolicy,
  canonical,
  type EffectiveMaintenance,
  effectiveMaintenance,
} from "./effective-config.js";

export interface MaintenancePlan {
  hostId: string;
  effective: EffectiveMaintenance;
  /** Fields whose value changes: set by a policy, or back to the default. */
  changed: string[];
  body: MaintenanceBody;
  policyFields: Record<string, string>;
}

type Row = typeof maintenance.$inferSelect;

export async function loadMaintenance(db: Database, hostIds?: readonly string[]): Promise<Map<string, Row>> {
  const rows = await db
    .select()
    .from(maintenance)
    .where(hostIds === undefined ? undefined : inArray(maintenance.hostId, [...hostIds]));
  return new Map(rows.map((row) => [row.hostId, row]));
}

export function planMaintenance(
  host: { id: string; labels: Labels },
  row: Row | undefined,
  policies: readonly ActivePolicy[],
): MaintenancePlan {
  const overrides = row?.overrides ?? {};
  const effective = effectiveMaintenance(host.labels, policies, overrides);
  const current: Record<string, unknown> = row ? maintenanceValues(row) : { ...MAINTENANCE_DEFAULTS };
  const before = row?.policyFields ?? {};
  const body: Record<string, unknown> = {};
  const policyFields: Record<string, string> = {};
  for (const [field, value] of Object.entries(effective.values)) {
    const from = effective.from[field];
    policyFields[field] = `${from?.id}:${from?.version}`;
    if (canonical(current[field]) !== canonical(value)) {
      body[field] = value;
    }
  }
  // Given before, given by no policy now (and not the host's own): back to the default.
  for (const field of Object.keys(before)) {
    if (!(field in effective.values) && !Object.hasOwn(overrides, field)) {
      const fallback = (MAINTENANCE_DEFAULTS as Record<string, unknown>)[field];
      if (canonical(current[field]) !== canonical(fallback)) {
        body[field] = fallback;
      }
    }
  }
  return {
    hostId: host.id,
    effective,
    changed: Object.keys(body).sort(),
    body: body as MaintenanceBody,
    policyFields,
  };
}

/** True when the plan writes the host's record (a value, or which policy gave it). */
export function writesMaintenance(plan: MaintenancePlan, row: Row | undefined): boolean {
  return plan.changed.length > 0 || canonical(row?.policyFields ?? {}) !== canonical(plan.policyFields);
}

export async function applyMaintenancePlans(
  tx: Database,
  plans: readonly MaintenancePlan[],
  rows: ReadonlyMap<string, Row>,
  now: Date,
): Promise<void> {
  for (const plan of plans) {
    if (!writesMaintenance(plan, rows.get(plan.hostId))) {
      continue;
    }
    const current = await getMaintenance(tx, plan.hostId, now);
    const patch = maintenancePatch(current, plan.body, now);
    await tx
      .update(maintenance)
      .set({ ...patch, policyFields: plan.policyFields })
      .where(eq(maintenance.hostId, plan.hostId));
  }
}

/**
 * @module policies/fleet-maintenance
 * A host's own maintenance and drill cadences in the fleet document (issue 37.4): the fields the
 * host set itself, which are the fields no policy gives it that differ from the defaults and the
 * fields it keeps over a policy's (its overrides). Applying a host's `maintenance` makes exactly
 * those its own: a listed field a policy gives becomes an override, a listed field no policy gives
 * is set; an own field left out goes back to the default, or an override left out hands the field
 * back to its policy. A host entry without `maintenance` leaves the host's cadences alone.
 */
import { type Database, maintenance } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { invalid } from "../errors.js";
import {
  getMaintenance,
  MAINTENANCE_DEFAULTS,
  MAINTENANCE_FIELDS,
  type MaintenanceBody,
  maintenancePatch,
  maintenanceValues,
} from "../maintenance/maintenance-record.js";
import { checkCron } from "../sources/cron.js";
import { canonical } from "./effective-config.js";
import type { Change } from "./spec-diff.js";

type Row = typeof maintenance.$inferSelect;

/** What the host set itself, in field order; empty for a host on defaults and policies. */
export function ownMaintenance(row: Row | undefined): MaintenanceBody {
  if (!row) {
    return {};
  }
  const values: Record<string, unknown> = maintenanceValues(row);
  const own: Record<string, unknown> = {};
  for (const field of MAINTENANCE_FIELDS) {
    if (Object.hasOwn(row.overrides, field)) {
      own[field] = row.overrides[field];
    } else if (
      !Object.hasOwn(row.policyFields, field) &&
      canonical(values[field]) !== canonical(MAINTENANCE_DEFAULTS[field])
    ) {
      own[field] = values[field];
    }
  }
  return own as MaintenanceBody;
}

/** Every cron of `wanted` checked, a refusal naming `at` and the field; crons in canonical form. */
export function checkOwnMaintenance(wanted: MaintenanceBody, at: string): MaintenanceBody {
  const checked: Record<string, unknown> = { ...wanted };
  for (const field of ["forget_cron", "prune_cron", "check_cron", "drill_cron"] as const) {
    const value = wanted[field];
    if (value === undefined) {
      continue;
    }
    const result = checkCron(value);
    if (!result.ok) {
      const message = result.message.replace(/^cron: /, "");
      throw invalid(`${at}.${field}: ${message}`, [{ field: `${at}.${field}`, message }]);
    }
    checked[field] = result.cron;
  }
  return checked as MaintenanceBody;
}

/** The differences between what the host has as its own and what the document wants, field by field. */
export function ownMaintenanceChanges(row: Row | undefined, wanted: MaintenanceBody): Change[] {
  const have: Record<string, unknown> = ownMaintenance(row);
  const want: Record<string, unknown> = wanted;
  return MAINTENANCE_FIELDS.filter(
    (field) => canonical(have[field] ?? null) !== canonical(want[field] ?? null),
  ).map((field) => ({
    path: `maintenance.${field}`,
    before: have[field] ?? null,
    after: want[field] ?? null,
  }));
}

/**
 * Writes `wanted` as the host's own cadences, in the applying transaction; the policies are
 * brought in line afterwards (reconcileHosts), which writes a policy's value where an override
 * was handed back.
 */
export async function applyOwnMaintenance(
  tx: Database,
  hostId: string,
  wanted: MaintenanceBody,
  now: Date,
): Promise<void> {
  const current = await getMaintenance(tx, hostId, now);
  const want: Record<string, unknown> = wanted;
  const overrides: Record<string, unknown> = {};
  const body: Record<string, unknown> = {};
  for (const field of MAINTENANCE_FIELDS) {
    const given = Object.hasOwn(current.policyFields, field);
    if (field in want) {
      if (given) {
        overrides[field] = want[field];
      }
      body[field] = want[field];
    } else if (!given) {
      body[field] = MAINTENANCE_DEFAULTS[field];
    }
  }
  const patch = maintenancePatch(current, body as MaintenanceBody, now);
  await tx
    .update(maintenance)
    .set({ ...patch, overrides })
    .where(eq(maintenance.hostId, hostId));
}

/**
 * @module maintenance/maintenance-record
 * The per-host maintenance record: forget, prune, check and restore-drill
 * cadences with their enable flags, the check's read-data subset and the drill's sample size. It is created with the
 * defaults on first read, so every host has one without a migration step; the slot columns are
 * the ticker's memory of what it already dispatched.
 */
import { type Database, type Maintenance, maintenance } from "@fleetback/db";
import { DRILL_MAX_SAMPLE_FILES } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { type Static, Type } from "typebox";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { Clock } from "../clock.js";
import { invalid } from "../errors.js";
import { requireHost } from "../hosts/require-host.js";
import type { Ids } from "../ids.js";
import { presentFields } from "../present-fields.js";
import { checkCron } from "../sources/cron.js";
import { nextSlot } from "./due-slot.js";

export const MAINTENANCE_KINDS = ["forget", "prune", "check", "drill"] as const;
export type MaintenanceKind = (typeof MAINTENANCE_KINDS)[number];

/** restic's --read-data-subset forms: n/t, a percentage, or a size; empty = no data read. */
export const READ_DATA_SUBSET_PATTERN =
  "^(?:|[1-9][0-9]{0,5}/[1-9][0-9]{0,5}|(?:100|[0-9]{1,2}(?:\\.[0-9]{1,3})?)%|[1-9][0-9]{0,9}[KMGT])$";

const Cron = Type.String({ minLength: 1, maxLength: 200 });
export const MaintenanceBody = Type.Object(
  {
    forget_cron: Type.Optional(Cron),
    forget_enabled: Type.Optional(Type.Boolean()),
    prune_cron: Type.Optional(Cron),
    prune_enabled: Type.Optional(Type.Boolean()),
    check_cron: Type.Optional(Cron),
    check_enabled: Type.Optional(Type.Boolean()),
    check_read_data_subset: Type.Optional(
      Type.String({ pattern: READ_DATA_SUBSET_PATTERN, description: "like 5%, 1/10 or 2G, or empty" }),
    ),
    drill_cron: Type.Optional(Cron),
    drill_enabled: Type.Optional(Type.Boolean()),
    drill_sample_files: Type.Optional(Type.Integer({ minimum: 1, maximum: DRILL_MAX_SAMPLE_FILES })),
  },
  { additionalProperties: false },
);
export type MaintenanceBody = Static<typeof MaintenanceBody>;

/** The host's record; inserted with the defaults when missing. `db` may be a transaction. */
export async function getMaintenance(db: Database, hostId: string, now: Date): Promise<Maintenance> {
  await db
    .insert(maintenance)
    .values({ hostId, createdAt: now, updatedAt: now })
    .onConflictDoNothing({ target: maintenance.hostId });
  const [row] = await db.select().from(maintenance).where(eq(maintenance.hostId, hostId));
  if (!row) {
    throw new Error(`maintenance record of ${hostId} vanished after its insert`);
  }
  return row;
}

export async function readMaintenance(db: Database, hostId: string, now: Date): Promise<Maintenance> {
  await requireHost(db, hostId);
  return getMaintenance(db, hostId, now);
}

function cronOrThrow(field: string, value: string | undefined): string | undefined {
  if (value === undefined) {
    return undefined;
  }
  const checked = checkCron(value);
  if (!checked.ok) {
    throw invalid(`${field}: ${checked.message.replace(/^cron: /, "")}`, [
      { field, message: checked.message.replace(/^cron: /, "") },
    ]);
  }
  return checked.cron;
}

/** The fields a maintenance record has, under their API names (what a policy may give). */
export const MAINTENANCE_FIELDS = Object.keys(MaintenanceBody.properties) as Array<keyof MaintenanceBody>;

/** A record's values under their API names. */
export function maintenanceValues(row: Maintenance): Required<MaintenanceBody> {
  return {
    forget_cron: row.forgetCron,
    forget_enabled: row.forgetEnabled,
    prune_cron: row.pruneCron,
    prune_enabled: row.pruneEnabled,
    check_cron: row.checkCron,
    check_enabled: row.checkEnabled,
    check_read_data_subset: row.checkReadDataSubset,
    drill_cron: row.drillCron,
    drill_enabled: row.drillEnabled,
    drill_sample_files: row.drillSampleFiles,
  };
}

/** What a record holds before anyone sets it (the table's defaults). */
export const MAINTENANCE_DEFAULTS: Required<MaintenanceBody> = {
  forget_cron: "0 3 * * *",
  forget_enabled: true,
  prune_cron: "0 4 * * 0",
  prune_enabled: true,
  check_cron: "0 5 1 * *",
  check_enabled: true,
  check_read_data_subset: "5%",
  drill_cron: "0 6 * * 3",
  drill_enabled: false,
  drill_sample_files: 20,
};

/**
 * The update of `current` that `body` asks for; every cron checked (throws naming the field). A
 * changed cadence starts counting from now: its earlier slots are not owed.
 */
export function maintenancePatch(
  current: Maintenance,
  body: MaintenanceBody,
  now: Date,
): Partial<Maintenance> {
  const forgetCron = cronOrThrow("forget_cron", body.forget_cron);
  const pruneCron = cronOrThrow("prune_cron", body.prune_cron);
  const checkCronValue = cronOrThrow("check_cron", body.check_cron);
  const drillCron = cronOrThrow("drill_cron", body.drill_cron);
  const patch: Partial<Maintenance> = {
    ...presentFields<MaintenanceBody, Maintenance>(body, {
      forget_enabled: "forgetEnabled",
      prune_enabled: "pruneEnabled",
      check_enabled: "checkEnabled",
      check_read_data_subset: "checkReadDataSubset",
      drill_sample_files: "drillSampleFiles",
    }),
    updatedAt: now,
  };
  // A changed cadence starts counting from now: its earlier slots are not owed.
  if (forgetCron !== undefined && forgetCron !== current.forgetCron) {
    Object.assign(patch, { forgetCron, lastForgetSlotAt: now });
  }
  if (pruneCron !== undefined && pruneCron !== current.pruneCron) {
    Object.assign(patch, { pruneCron, lastPruneSlotAt: now });
  }
  if (checkCronValue !== undefined && checkCronValue !== current.checkCron) {
    Object.assign(patch, { checkCron: checkCronValue, lastCheckSlotAt: now });
  }
  if (drillCron !== undefined && drillCron !== current.drillCron) {
    Object.assign(patch, { drillCron, lastDrillSlotAt: now });
  }
  if (body.drill_enabled !== undefined) {
    patch.drillEnabled = body.drill_enabled;
    // Switching drills on starts counting from now: the slots of the time they were off are not owed.
    if (body.drill_enabled && !current.drillEnabled) {
      patch.lastDrillSlotAt = now;
    }
  }
  return patch;
}

/**
 * Applies the fields present; every cron is checked before anything is written. A field a policy
 * gave the host becomes the host's own override, kept over the policy's next versions.
 */
export async function updateMaintenance(
  deps: { db: Database; clock: Clock; ids: Ids },
  audit: AuditContext,
  hostId: string,
  body: MaintenanceBody,
): Promise<Maintenance> {
  const now = deps.clock.now();
  const current = await readMaintenance(deps.db, hostId, now);
  const patch = maintenancePatch(current, body, now);
  const fromPolicy = MAINTENANCE_FIELDS.filter(
    (field) => body[field] !== undefined && field in current.policyFields,
  );
  if (fromPolicy.length > 0) {
    patch.overrides = {
      ...current.overrides,
      ...Object.fromEntries(fromPolicy.map((field) => [field, body[field]])),
    };
  }
  return deps.db.transaction(async (tx) => {
    const [row] = await tx.update(maintenance).set(patch).where(eq(maintenance.hostId, hostId)).returning();
    if (!row) {
      throw new Error(`maintenance record of ${hostId} vanished during its update`);
    }
    await writeAudit(tx, deps, {
      ...audit,
      action: "maintenance.update",
      targetKind: "host",
      targetId: hostId,
      details: { ...body },
    });
    return row;
  });
}

export function cadenceOf(record: Maintenance, kind: MaintenanceKind): { cron: string; enabled: boolean } {
  switch (kind) {
    case "forget":
      return { cron: record.forgetCron, enabled: record.forgetEnabled };
    case "prune":
      return { cron: record.pruneCron, enabled: record.pruneEnabled };
    case "check":
      return { cron: record.checkCron, enabled: record.checkEnabled };
    case "drill":
      return { cron: record.drillCron, enabled: record.drillEnabled };
  }
}

export function maintenanceJson(record: Maintenance, timeZone: string, now: Date) {
  const next = (kind: MaintenanceKind) => {
    const { cron, enabled } = cadenceOf(record, kind);
    return enabled ? nextSlot(cron, timeZone, now).toISOString() : null;
  };
  return {
    host_id: record.hostId,
    time_zone: timeZone,
    forget_cron: record.forgetCron,
    forget_enabled: record.forgetEnabled,
    prune_cron: record.pruneCron,
    prune_enabled: record.pruneEnabled,
    check_cron: record.checkCron,
    check_enabled: record.checkEnabled,
    check_read_data_subset: record.checkReadDataSubset,
    drill_cron: record.drillCron,
    drill_enabled: record.drillEnabled,
    drill_sample_files: record.drillSampleFiles,
    next_forget_at: next("forget"),
    next_prune_at: next("prune"),
    next_check_at: next("check"),
    next_drill_at: next("drill"),
    updated_at: record.updatedAt,
  };
}

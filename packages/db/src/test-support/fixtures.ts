/**
 * @module Minimal valid rows for tests of this package; each insert returns what it inserted.
 */
import { randomBytes } from "node:crypto";
import { getTableName } from "drizzle-orm";
import type { PgInsertValue, PgTable } from "drizzle-orm/pg-core";
import type { Database } from "../database.js";
import {
  alerts,
  hosts,
  jobs,
  type NewAlert,
  type NewHost,
  type NewJob,
  type NewSourceGroup,
  schedules,
  sourceGroups,
} from "../schema/index.js";

let counter = 0;

/** A unique id that sorts by creation (stand-in for a ULID). */
export function testId(prefix: string): string {
  counter += 1;
  return `${prefix}_${Date.now().toString(36)}_${counter.toString().padStart(6, "0")}_${randomBytes(3).toString("hex")}`;
}

/** Inserts one row and returns it as stored; an insert that returned none is a broken fixture. */
async function insertRow<T extends PgTable>(
  db: Database,
  table: T,
  values: PgInsertValue<T>,
): Promise<T["$inferSelect"]> {
  const [row] = (await db.insert(table).values(values).returning()) as T["$inferSelect"][];
  if (!row) {
    throw new Error(`insert into ${getTableName(table)} returned no row`);
  }
  return row;
}

export function insertHost(db: Database, fields: Partial<NewHost> = {}) {
  const id = fields.id ?? testId("host");
  const name = fields.name ?? "web-1";
  const resticHost = fields.resticHost ?? id;
  return insertRow(db, hosts, {
    id,
    name,
    os: "linux",
    arch: "amd64",
    agentVersion: "0.1.0",
    resticHost,
    snapshotHostnames: [resticHost, name],
    ...fields,
  });
}

export function insertSourceGroup(db: Database, hostId: string, fields: Partial<NewSourceGroup> = {}) {
  return insertRow(db, sourceGroups, {
    id: testId("group"),
    hostId,
    name: "etc",
    includes: ["/etc"],
    ...fields,
  });
}

export function insertSchedule(db: Database, hostId: string) {
  return insertRow(db, schedules, { id: testId("schedule"), hostId, cron: "0 * * * *" });
}

export function insertAlert(db: Database, hostId: string, fields: Partial<NewAlert> = {}) {
  return insertRow(db, alerts, {
    id: testId("alert"),
    hostId,
    kind: "backup_failed",
    message: "failed",
    ...fields,
  });
}

export function insertJob(db: Database, hostId: string, fields: Partial<NewJob> = {}) {
  return insertRow(db, jobs, { id: testId("job"), hostId, kind: "backup", actorKind: "user", ...fields });
}

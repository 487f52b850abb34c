/**
 * @module Minimal valid rows for tests of this package; each insert returns what it inserted.
 */
import { randomBytes } from "node:crypto";
import type { Database } from "../database.js";
import {
  hosts,
  jobs,
  type NewHost,
  type NewJob,
  type NewSourceGroup,
  sourceGroups,
} from "../schema/index.js";

let counter = 0;

/** A unique id that sorts by creation (stand-in for a ULID). */
export function testId(prefix: string): string {
  counter += 1;
  return `${prefix}_${Date.now().toString(36)}_${counter.toString().padStart(6, "0")}_${randomBytes(3).toString("hex")}`;
}

export async function insertHost(db: Database, fields: Partial<NewHost> = {}) {
  const id = fields.id ?? testId("host");
  const name = fields.name ?? "web-1";
  const resticHost = fields.resticHost ?? id;
  const [row] = await db
    .insert(hosts)
    .values({
      id,
      name,
      os: "linux",
      arch: "amd64",
      agentVersion: "0.1.0",
      resticHost,
      snapshotHostnames: [resticHost, name],
      ...fields,
    })
    .returning();
  if (!row) {
    throw new Error("insert into hosts returned no row");
  }
  return row;
}

export async function insertSourceGroup(db: Database, hostId: string, fields: Partial<NewSourceGroup> = {}) {
  const [row] = await db
    .insert(sourceGroups)
    .values({ id: testId("group"), hostId, name: "etc", includes: ["/etc"], ...fields })
    .returning();
  if (!row) {
    throw new Error("insert into source_groups returned no row");
  }
  return row;
}

export async function insertJob(db: Database, hostId: string, fields: Partial<NewJob> = {}) {
  const [row] = await db
    .insert(jobs)
    .values({ id: testId("job"), hostId, kind: "backup", actorKind: "user", ...fields })
    .returning();
  if (!row) {
    throw new Error("insert into jobs returned no row");
  }
  return row;
}

/**
 * Job kinds, statuses, actor kinds, log streams and agent kinds are the protocol's (schema/jobs.ts
 * and schema/hosts.ts take them from there); the migrations spell them again in CHECK constraints. This reads the CHECKs of a
 * migrated database back, so a word added to the protocol without a migration fails here, not on
 * the first job of that kind in production.
 */
import {
  ACTOR_KINDS,
  AGENT_KINDS,
  JOB_KINDS,
  JOB_STATUSES,
  LOG_STREAMS,
  TREE_ENTRY_TYPES,
} from "@fleetback/protocol";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { executeRows } from "./database.js";
import { runDbSuite } from "./testing/db-suite.js";

const TIED: Record<string, readonly string[]> = {
  jobs_kind_check: JOB_KINDS,
  jobs_status_check: JOB_STATUSES,
  jobs_actor_kind_check: ACTOR_KINDS,
  job_logs_stream_check: LOG_STREAMS,
  file_versions_type_check: TREE_ENTRY_TYPES,
  hosts_agent_kind_check: AGENT_KINDS,
};

/** The quoted words of a CHECK as PostgreSQL prints it: `(kind = ANY (ARRAY['a'::text, …]))`. */
function wordsOf(definition: string): string[] {
  return [...definition.matchAll(/'((?:[^']|'')*)'/g)].map((match) => (match[1] ?? "").replaceAll("''", "'"));
}

runDbSuite("the database's vocabulary is the protocol's", (getDb) => {
  it("has CHECKs that allow exactly the protocol's job kinds, statuses, actor kinds, log streams and agent kinds", async () => {
    const rows = await executeRows<{ name: string; definition: string }>(
      getDb(),
      sql`select c.conname as name, pg_get_constraintdef(c.oid) as definition
            from pg_constraint c join pg_namespace n on n.oid = c.connamespace
           where n.nspname = current_schema() and c.contype = 'c'
             and c.conname = any(${sql.param(Object.keys(TIED))}::text[])`,
    );
    const found = Object.fromEntries(rows.map((row) => [row.name, [...wordsOf(row.definition)].sort()]));
    const expected = Object.fromEntries(
      Object.entries(TIED).map(([name, words]) => [name, [...words].sort()]),
    );
    expect(found).toEqual(expected);
  });
});

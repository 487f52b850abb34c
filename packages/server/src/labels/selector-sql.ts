/**
 * @module labels/selector-sql
 * A parsed selector as one SQL predicate on a jsonb labels column. Equality and set membership
 * are `@>` containment and key presence is `?`, both of which the GIN index on hosts.labels
 * answers, so a selector over ten thousand hosts is an index scan, not a per-row evaluation.
 * Must agree with matchesSelector (selector.ts); the property test holds them together.
 */
import { type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Requirement, Selector } from "./selector.js";

function contains(column: AnyPgColumn | SQL, key: string, value: string): SQL {
  return sql`${column} @> ${JSON.stringify({ [key]: value })}::jsonb`;
}

function anyOf(column: AnyPgColumn | SQL, key: string, values: readonly string[]): SQL {
  return sql`(${sql.join(
    values.map((value) => contains(column, key, value)),
    sql` or `,
  )})`;
}

function requirementSql(column: AnyPgColumn | SQL, requirement: Requirement): SQL {
  switch (requirement.op) {
    case "eq":
      return contains(column, requirement.key, requirement.value);
    case "ne":
      return sql`not (${contains(column, requirement.key, requirement.value)})`;
    case "in":
      return anyOf(column, requirement.key, requirement.values);
    case "notin":
      return sql`not ${anyOf(column, requirement.key, requirement.values)}`;
    case "exists":
      return sql`${column} ? ${requirement.key}`;
    case "notexists":
      return sql`not (${column} ? ${requirement.key})`;
  }
}

/** `true` for the empty selector. */
export function selectorSql(column: AnyPgColumn | SQL, selector: Selector): SQL {
  if (selector.length === 0) {
    return sql`true`;
  }
  return sql`(${sql.join(
    selector.map((requirement) => requirementSql(column, requirement)),
    sql` and `,
  )})`;
}

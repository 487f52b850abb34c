/**
 * The SQL form of a selector selects exactly the hosts the in-memory evaluator matches, on
 * PGlite and PostgreSQL alike: random label sets and random selectors over a small vocabulary
 * (so that requirements hit and miss), checked by fast-check.
 */
import { hosts } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { asc } from "drizzle-orm";
import fc from "fast-check";
import { expect, it } from "vitest";
import { seedHost } from "../testing/seed.js";
import type { Labels } from "./label-rules.js";
import { formatSelector, matchesSelector, parseSelector, type Requirement } from "./selector.js";
import { selectorSql } from "./selector-sql.js";

const KEYS = ["env", "role", "example.com/team", "x"];
const VALUES = ["prod", "db", "web", "", "a.b-c_d"];

const labelsArb: fc.Arbitrary<Labels> = fc
  .dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), {
    maxKeys: KEYS.length,
    // fast-check's dictionaries have no prototype, which the ORM's insert cannot read.
  })
  .map((labels) => ({ ...labels }));
const requirementArb: fc.Arbitrary<Requirement> = fc.oneof(
  fc.record({
    key: fc.constantFrom(...KEYS),
    op: fc.constantFrom("eq" as const, "ne" as const),
    value: fc.constantFrom(...VALUES),
  }),
  fc.record({
    key: fc.constantFrom(...KEYS),
    op: fc.constantFrom("in" as const, "notin" as const),
    values: fc.uniqueArray(fc.constantFrom(...VALUES), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ key: fc.constantFrom(...KEYS), op: fc.constantFrom("exists" as const, "notexists" as const) }),
);

runDbSuite("selectorSql", (getDb) => {
  it("selects the hosts matchesSelector matches", async () => {
    const db = getDb();
    const fleet = fc.sample(labelsArb, { numRuns: 40, seed: 37 });
    fleet.push({}, { env: "prod", role: "db" }, { env: "" });
    const ids: string[] = [];
    for (const [index, labels] of fleet.entries()) {
      const { host } = await seedHost({ db }, { name: `h-${index}`, labels });
      ids.push(host.id);
    }
    await fc.assert(
      fc.asyncProperty(fc.array(requirementArb, { maxLength: 4 }), async (generated) => {
        // Through the text form, so the parser is part of what must agree.
        const selector = parseSelector(formatSelector(generated));
        const rows = await db
          .select({ id: hosts.id })
          .from(hosts)
          .where(selectorSql(hosts.labels, selector))
          .orderBy(asc(hosts.id));
        const expected = ids.filter((_, index) => matchesSelector(selector, fleet[index] ?? {}));
        expect(rows.map((row) => row.id)).toEqual([...expected].sort());
      }),
      { numRuns: 150, seed: 37 },
    );
  });
});

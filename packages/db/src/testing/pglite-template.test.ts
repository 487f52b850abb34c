import { PGlite } from "@electric-sql/pglite";
import { expect, it } from "vitest";
import { pgliteOptions } from "../connect.js";
import { loadMigrations, MIGRATIONS_TABLE } from "../migrate.js";
import { startFromTemplate, TEMPLATE_SCHEMA } from "./pglite-template.js";

it("starts PGlite from a dumped data dir holding a schema with every migration applied", {
  timeout: 180_000,
}, async () => {
  const options = pgliteOptions(PGlite.defaultStartParams);
  // Twice: the first call may make the template, the second must load it.
  for (let round = 0; round < 2; round++) {
    const { client, templated } = await startFromTemplate(PGlite, options);
    try {
      expect(templated).toBe(true);
      const { rows } = await client.query<{ name: string }>(
        `select name from ${TEMPLATE_SCHEMA}.${MIGRATIONS_TABLE} order by id`,
      );
      expect(rows.map((row) => row.name)).toEqual((await loadMigrations()).map((m) => m.name));
      const hosts = await client.query<{ n: number }>(
        `select count(*)::int as n from ${TEMPLATE_SCHEMA}.hosts`,
      );
      expect(hosts.rows[0]?.n).toBe(0);
    } finally {
      await client.close();
    }
  }
});

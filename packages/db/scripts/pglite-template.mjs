// Writes dist/pglite-template.tar.gz: a PGlite data dir just after initdb and this build's
// migrations, as PGlite dumps it, and dist/pglite-template.json naming those migrations. A first
// start on the embedded database then loads this (~1 s) instead of running initdb in WebAssembly
// and then every migration (~5 s and ~2 s of a 2-core machine, most of a first start: issue 40,
// budget B7). It holds no data and nothing secret: initdb writes the catalogue and configuration
// files, the migrations tables and indexes, the same for every install. pglite-create.ts falls
// back to initdb when it is missing or does not load (another PGlite build, a damaged file), and
// uses it only when its migrations begin the list the server asks for.
//   node scripts/pglite-template.mjs   (after tsc: it reads the migrations through dist/)
import { rename, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { loadMigrations, MIGRATIONS_TABLE, MIGRATIONS_TABLE_DDL } from "../dist/migrate.js";

const dist = (name) => fileURLToPath(new URL(`../dist/${name}`, import.meta.url));
const migrations = await loadMigrations();
const db = await PGlite.create();
// As the creating child applies them: one transaction with their bookkeeping rows.
await db.transaction(async (tx) => {
  await tx.query(MIGRATIONS_TABLE_DDL);
  for (const migration of migrations) {
    for (const statement of migration.statements) {
      await tx.query(statement);
    }
    await tx.query(`INSERT INTO ${MIGRATIONS_TABLE} (id, name, checksum) VALUES ($1, $2, $3)`, [
      migration.id,
      migration.name,
      migration.checksum,
    ]);
  }
});
const dump = await db.dumpDataDir("gzip");
await db.close();
// Each file whole or not at all; the list is written last, so a template without it is unused.
const write = async (name, bytes) => {
  await writeFile(dist(`${name}.tmp`), bytes);
  await rename(dist(`${name}.tmp`), dist(name));
};
await write("pglite-template.tar.gz", Buffer.from(await dump.arrayBuffer()));
const holds = migrations.map(({ id, name, checksum }) => ({ id, name, checksum }));
await write("pglite-template.json", `${JSON.stringify({ migrations: holds }, null, 2)}\n`);

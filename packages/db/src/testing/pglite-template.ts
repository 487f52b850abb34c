/**
 * @module A PGlite data dir with one migrated schema, made once and loaded by every test process.
 *
 * A new in-memory PGlite runs initdb: 1.3 s on a quiet machine and 14–29 s on a loaded one,
 * against 3–5 s to load a dumped data dir there, and the dump already holds a migrated schema, so
 * a test file's first database is a rename away (issue 32). The dump is keyed by the PGlite
 * version and the migrations' checksums, so a changed migration makes a new one; it lives in the
 * workspace's .cache and is written under a temporary name and renamed, so test processes that
 * make it at the same moment never read half of one.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, openAsBlob, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { PGlite, PGliteOptions } from "@electric-sql/pglite";
import { drizzlePglite, IN_MEMORY, quoteIdentifier } from "../connect.js";
import { loadMigrations, migrate } from "../migrate.js";

/** The migrated schema inside the dump; a test engine hands it out as its first spare. */
export const TEMPLATE_SCHEMA = "fb_template_spare";

/** From src/testing or dist/testing of packages/db to the workspace's .cache. */
const CACHE_DIR = fileURLToPath(new URL("../../../../.cache/pglite-template/", import.meta.url));

function pgliteVersion(): string {
  const require = createRequire(import.meta.url);
  const entry = require.resolve("@electric-sql/pglite");
  let dir = dirname(entry);
  while (!existsSync(join(dir, "package.json"))) {
    dir = dirname(dir);
  }
  return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
}

async function templateFile(startParams: readonly string[]): Promise<string> {
  const migrations = await loadMigrations();
  const key = createHash("sha256")
    .update(JSON.stringify([pgliteVersion(), startParams, migrations.map((m) => m.checksum)]))
    .digest("hex")
    .slice(0, 16);
  return join(CACHE_DIR, `${key}.tar`);
}

async function makeTemplate(
  create: (options: PGliteOptions) => Promise<PGlite>,
  options: PGliteOptions,
  file: string,
): Promise<void> {
  const client = await create(options);
  try {
    await client.exec(`CREATE SCHEMA ${quoteIdentifier(TEMPLATE_SCHEMA)}`);
    await client.exec(`SET search_path TO ${quoteIdentifier(TEMPLATE_SCHEMA)}`);
    await migrate(await drizzlePglite(client));
    await client.exec("RESET search_path");
    const dump = await client.dumpDataDir("none");
    mkdirSync(CACHE_DIR, { recursive: true });
    const partial = `${file}.${randomBytes(4).toString("hex")}.partial`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, file);
  } finally {
    await client.close();
  }
}

/**
 * A PGlite started from the template (made first when there is none yet), and whether it holds
 * TEMPLATE_SCHEMA. Without a writable cache it starts empty, as PGlite always did.
 */
export async function startFromTemplate(
  PGliteClass: { create(dataDir: string, options: PGliteOptions): Promise<PGlite> },
  options: PGliteOptions & { startParams: string[] },
): Promise<{ client: PGlite; templated: boolean }> {
  const create = (extra: PGliteOptions) => PGliteClass.create(IN_MEMORY, { ...options, ...extra });
  try {
    const file = await templateFile(options.startParams);
    if (!existsSync(file)) {
      await makeTemplate(create, {}, file);
    }
    return { client: await create({ loadDataDir: await openAsBlob(file) }), templated: true };
  } catch {
    return { client: await create({}), templated: false };
  }
}

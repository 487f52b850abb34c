/**
 * @module A new PGlite data dir is created by a short-lived child process.
 *
 * PGlite's initdb grows its WebAssembly memory to ~700 MiB, and a WebAssembly.Memory never gives
 * pages back, even once the database is closed: a fresh install held ~760 MiB until its first
 * restart, against ~220 MiB for the same server reopening the same dir (issue 19, B8). Created in
 * a child, that memory goes with the child; this process only opens the finished dir, which costs
 * a first start ~0.4 s (PGlite's reopen) against its 5 s budget (B7).
 *
 * The child also applies the migrations it is given, in one transaction with their bookkeeping
 * rows, as migrate.ts would: on a new dir they grew this process's WASM memory by another ~20 MiB
 * for good (first start 207 MiB idle against 183 MiB on a restart). The server's own migrate() then
 * finds them applied and checks their checksums as on any start. A failed migration fails the
 * creation; the dir is left created and unmigrated, and the next start migrates it in process and
 * reports the same error.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS_TABLE, MIGRATIONS_TABLE_DDL, type Migration } from "./migrate.js";

/** Bounds a hung initdb; the first start on a slow disk takes a few seconds. */
export const PGLITE_CREATE_TIMEOUT_MS = 300_000;

/** Starts the one line the child prints for an error it caught (PostgreSQL's message, say). */
const ERROR_PREFIX = "pglite-create-error: ";

// argv: PGlite's module URL, the data dir, the start parameters as JSON. stdin: the migrations as
// JSON, with the bookkeeping table's DDL and its insert (a few dozen KiB: too much for argv).
const CREATE_SCRIPT = [
  "try {",
  "const { PGlite } = await import(process.argv[1]);",
  "const chunks = [];",
  "for await (const chunk of process.stdin) chunks.push(chunk);",
  "const { ddl, insert, migrations } = JSON.parse(Buffer.concat(chunks).toString('utf8'));",
  "const db = await PGlite.create(process.argv[2], { startParams: JSON.parse(process.argv[3]) });",
  "if (migrations.length > 0) {",
  "  await db.transaction(async (tx) => {",
  "    await tx.query(ddl);",
  "    for (const m of migrations) {",
  "      for (const statement of m.statements) await tx.query(statement);",
  "      await tx.query(insert, [m.id, m.name, m.checksum]);",
  "    }",
  "  });",
  "}",
  "await db.close();",
  "} catch (err) {",
  `  process.stderr.write(\`${ERROR_PREFIX}\${err instanceof Error ? err.message : String(err)}\\n\`);`,
  "  process.exit(1);",
  "}",
].join("\n");

/** PostgreSQL writes PG_VERSION into a data dir as initdb sets it up. */
export function isPgliteDataDir(location: string): boolean {
  return existsSync(join(location, "PG_VERSION"));
}

/**
 * Runs PGlite's initdb for `location` in a child process, and applies `migrations` there; rejects
 * with the error it printed.
 */
export function createPgliteDataDir(
  location: string,
  startParams: readonly string[],
  migrations: readonly Migration[] = [],
): Promise<void> {
  // Resolved here, as this module's own import of PGlite would be (also inside the server bundle).
  const pgliteUrl = import.meta.resolve("@electric-sql/pglite");
  const payload = JSON.stringify({
    ddl: MIGRATIONS_TABLE_DDL,
    insert: `INSERT INTO ${MIGRATIONS_TABLE} (id, name, checksum) VALUES ($1, $2, $3)`,
    migrations: migrations.map(({ id, name, checksum, statements }) => ({ id, name, checksum, statements })),
  });
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ["--input-type=module", "-e", CREATE_SCRIPT, pgliteUrl, location, JSON.stringify(startParams)],
      { timeout: PGLITE_CREATE_TIMEOUT_MS, maxBuffer: 1024 * 1024 },
      (error, _stdout, stderr) => {
        if (error) {
          // Node prints the thrown error's own line among the stack and its version banner.
          const lines = stderr.trim().split("\n");
          const caught = lines.find((line) => line.startsWith(ERROR_PREFIX))?.slice(ERROR_PREFIX.length);
          const said = (caught ?? lines.find((line) => /Error\b/.test(line)) ?? lines.at(-1) ?? "")
            .trim()
            .slice(0, 500);
          reject(new Error(`creating it failed (${error.message.split("\n")[0]})${said ? `: ${said}` : ""}`));
          return;
        }
        resolve();
      },
    );
    child.stdin?.end(payload);
  });
}

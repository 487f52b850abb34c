/**
 * @module A new PGlite data dir is created by a short-lived child process.
 *
 * PGlite's initdb grows its WebAssembly memory to ~700 MiB, and a WebAssembly.Memory never gives
 * pages back, even once the database is closed: a fresh install held ~760 MiB until its first
 * restart, against ~220 MiB for the same server reopening the same dir (issue 19, B8). Created in
 * a child, that memory goes with the child; this process only opens the finished dir, which costs
 * a first start ~0.4 s (PGlite's reopen) against its 5 s budget (B7).
 *
 * The child does not run initdb either when the build left its template (a data dir just after
 * initdb and the build's migrations, dumped by PGlite: scripts/pglite-template.mjs): loading it
 * takes ~1 s where initdb in WebAssembly takes ~5 s and the migrations ~2 s, most of a first
 * start (issue 40, B7). It is used only when its migrations begin the list asked for, and then
 * only the rest are applied; a template that does not load (another PGlite build, a damaged file)
 * costs only the initdb it would have saved.
 *
 * The child also applies the migrations it is given, in one transaction with their bookkeeping
 * rows, as migrate.ts would: on a new dir they grew this process's WASM memory by another ~20 MiB
 * for good (first start 207 MiB idle against 183 MiB on a restart). The server's own migrate() then
 * finds them applied and checks their checksums as on any start. A failed migration fails the
 * creation; the dir is left created and unmigrated, and the next start migrates it in process and
 * reports the same error.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MIGRATIONS_TABLE, MIGRATIONS_TABLE_DDL, type Migration } from "./migrate.js";

/** Bounds a hung initdb; the first start on a slow disk takes a few seconds. */
export const PGLITE_CREATE_TIMEOUT_MS = 300_000;

/** Starts the one line the child prints for an error it caught (PostgreSQL's message, say). */
const ERROR_PREFIX = "pglite-create-error: ";
/** Starts the line the child prints when the template did not load and initdb ran instead. */
const TEMPLATE_PREFIX = "pglite-create-template-refused: ";

/**
 * A data dir just after initdb and the build's migrations, dumped by PGlite at build time
 * (scripts/pglite-template.mjs), with the list of those migrations beside it. Resolved from the
 * package root, so they are the same files from src/ (tests) and dist/.
 */
export const PGLITE_TEMPLATE = fileURLToPath(new URL("../dist/pglite-template.tar.gz", import.meta.url));
const PGLITE_TEMPLATE_LIST = fileURLToPath(new URL("../dist/pglite-template.json", import.meta.url));

export interface PgliteTemplate {
  /** The dumped data dir (gzip tar, as PGlite's `dumpDataDir` writes it). */
  file: string;
  /** The migrations it holds, in order. */
  holds: ReadonlyArray<{ id: number; checksum: string }>;
}

/** The build's template, or null when it or its list is missing or unreadable. */
export function buildTemplate(): PgliteTemplate | null {
  try {
    const list = JSON.parse(readFileSync(PGLITE_TEMPLATE_LIST, "utf8")) as {
      migrations?: Array<{ id: number; checksum: string }>;
    };
    if (!existsSync(PGLITE_TEMPLATE) || !Array.isArray(list.migrations)) {
      return null;
    }
    return { file: PGLITE_TEMPLATE, holds: list.migrations.map(({ id, checksum }) => ({ id, checksum })) };
  } catch {
    return null;
  }
}

/**
 * How many of `migrations` the template already holds: all of its own, when they begin the list
 * exactly (same ids and checksums); otherwise it is not the database these migrations describe.
 */
export function heldBy(template: PgliteTemplate, migrations: readonly Migration[]): number | undefined {
  const { holds } = template;
  const begins =
    holds.length <= migrations.length &&
    holds.every((held, i) => held.id === migrations[i]?.id && held.checksum === migrations[i]?.checksum);
  return begins ? holds.length : undefined;
}

/** How a new data dir was made, and why not from the template when it was not. */
export interface CreatedDataDir {
  from: "template" | "initdb";
  /** The template's load error, when there was a template and it did not load. */
  templateRefused?: string;
}

// argv: PGlite's module URL, the data dir, the start parameters as JSON, the template's path (or
// ""). stdin: the migrations as JSON, how many of them the template holds, the bookkeeping table's
// DDL and its insert (a few dozen KiB: too much for argv). stdout: "template" or "initdb".
const CREATE_SCRIPT = [
  "try {",
  "const { PGlite } = await import(process.argv[1]);",
  "const { readFile, readdir, rm, mkdir } = await import('node:fs/promises');",
  "const chunks = [];",
  "for await (const chunk of process.stdin) chunks.push(chunk);",
  "const { ddl, insert, table, migrations, held } = JSON.parse(Buffer.concat(chunks).toString('utf8'));",
  "const [dir, params, template] = [process.argv[2], JSON.parse(process.argv[3]), process.argv[4]];",
  "let db;",
  "if (template && (await readdir(dir)).length === 0) {",
  "  try {",
  "    const loadDataDir = new Blob([await readFile(template)]);",
  "    db = await PGlite.create(dir, { startParams: params, loadDataDir });",
  "    await db.query('SELECT 1');",
  "  } catch (err) {",
  "    await db?.close().catch(() => {});",
  "    db = undefined;",
  `    process.stderr.write(\`${TEMPLATE_PREFIX}\${err instanceof Error ? err.message : String(err)}\\n\`);`,
  "    await rm(dir, { recursive: true, force: true });",
  "    await mkdir(dir, { recursive: true });",
  "  }",
  "}",
  "const how = db ? 'template' : 'initdb';",
  "db ??= await PGlite.create(dir, { startParams: params });",
  // The template's migrations were applied at build time; this install applies them now.
  "if (how === 'template' && held > 0) await db.query('UPDATE ' + table + ' SET applied_at = now()');",
  "const pending = how === 'template' ? migrations.slice(held) : migrations;",
  "if (pending.length > 0) {",
  "  await db.transaction(async (tx) => {",
  "    await tx.query(ddl);",
  "    for (const m of pending) {",
  "      for (const statement of m.statements) await tx.query(statement);",
  "      await tx.query(insert, [m.id, m.name, m.checksum]);",
  "    }",
  "  });",
  "}",
  "await db.close();",
  "process.stdout.write(how);",
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
 * Makes `location` a PGlite data dir in a child process, from the build's template when there is
 * one (else initdb), and applies `migrations` there; rejects with the error it printed.
 */
export function createPgliteDataDir(
  location: string,
  startParams: readonly string[],
  migrations: readonly Migration[] = [],
  template: PgliteTemplate | null = buildTemplate(),
): Promise<CreatedDataDir> {
  const held = template === null ? undefined : heldBy(template, migrations);
  // Resolved here, as this module's own import of PGlite would be (also inside the server bundle).
  const pgliteUrl = import.meta.resolve("@electric-sql/pglite");
  const payload = JSON.stringify({
    ddl: MIGRATIONS_TABLE_DDL,
    insert: `INSERT INTO ${MIGRATIONS_TABLE} (id, name, checksum) VALUES ($1, $2, $3)`,
    table: MIGRATIONS_TABLE,
    held: held ?? 0,
    migrations: migrations.map(({ id, name, checksum, statements }) => ({ id, name, checksum, statements })),
  });
  const args = [
    pgliteUrl,
    location,
    JSON.stringify(startParams),
    held === undefined ? "" : (template?.file ?? ""),
  ];
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ["--input-type=module", "-e", CREATE_SCRIPT, ...args],
      { timeout: PGLITE_CREATE_TIMEOUT_MS, maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        const lines = stderr.trim().split("\n");
        if (error) {
          // Node prints the thrown error's own line among the stack and its version banner.
          const caught = lines.find((line) => line.startsWith(ERROR_PREFIX))?.slice(ERROR_PREFIX.length);
          const said = (caught ?? lines.find((line) => /Error\b/.test(line)) ?? lines.at(-1) ?? "")
            .trim()
            .slice(0, 500);
          reject(new Error(`creating it failed (${error.message.split("\n")[0]})${said ? `: ${said}` : ""}`));
          return;
        }
        const refused = lines.find((line) => line.startsWith(TEMPLATE_PREFIX))?.slice(TEMPLATE_PREFIX.length);
        resolve({
          from: stdout.trim() === "template" ? "template" : "initdb",
          ...(refused === undefined ? {} : { templateRefused: refused.trim().slice(0, 500) }),
        });
      },
    );
    child.stdin?.end(payload);
  });
}

/**
 * Fetches restic 0.14 and 0.18, rest-server and htpasswd once per machine before any e2e test
 * (idempotent; a no-op when .cache/tools is complete). On a machine without apt-get and dpkg
 * the fetch fails: the tests that need these tools then skip and say so, the rest still run
 * (under CI=true the root test command has stopped before, in scripts/prepare-tools.mjs).
 * Then makes the run's embedded database template (paths.ts, pgliteTemplateDir) from this
 * checkout's migrations, afresh: a template of another checkout's migrations would fail a start.
 */
import { execFileSync } from "node:child_process";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { pgliteTemplateDir, repoRoot } from "./paths.js";

export async function setup(): Promise<void> {
  try {
    execFileSync("bash", [join(repoRoot, "scripts", "fetch-tools.sh")], { stdio: "inherit" });
  } catch (err) {
    process.stderr.write(
      `e2e: could not fetch restic/rest-server (${err instanceof Error ? err.message : String(err)}); tests that need them are skipped\n`,
    );
  }
  await rm(pgliteTemplateDir, { recursive: true, force: true });
  // In a plain node child, on the built @fleetback/db as the server uses it: vitest's module
  // runner cannot resolve PGlite's module URL, and this process need not hold its memory.
  const db = pathToFileURL(join(repoRoot, "packages", "db", "dist", "index.js")).href;
  execFileSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `const db = await import(${JSON.stringify(db)}); await db.createEmbeddedDatabase(process.argv[1], await db.loadMigrations());`,
      pgliteTemplateDir,
    ],
    { stdio: "inherit" },
  );
}

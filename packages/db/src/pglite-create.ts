/**
 * @module A new PGlite data dir is created by a short-lived child process.
 *
 * PGlite's initdb grows its WebAssembly memory to ~700 MiB, and a WebAssembly.Memory never gives
 * pages back, even once the database is closed: a fresh install held ~760 MiB until its first
 * restart, against ~220 MiB for the same server reopening the same dir (issue 19, B8). Created in
 * a child, that memory goes with the child; this process only opens the finished dir, which costs
 * a first start ~0.4 s (PGlite's reopen) against its 5 s budget (B7).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

/** Bounds a hung initdb; the first start on a slow disk takes a few seconds. */
export const PGLITE_CREATE_TIMEOUT_MS = 300_000;

// argv: PGlite's module URL, the data dir, the start parameters as JSON.
const CREATE_SCRIPT = [
  "const { PGlite } = await import(process.argv[1]);",
  "const db = await PGlite.create(process.argv[2], { startParams: JSON.parse(process.argv[3]) });",
  "await db.close();",
].join("\n");

/** PostgreSQL writes PG_VERSION into a data dir as initdb sets it up. */
export function isPgliteDataDir(location: string): boolean {
  return existsSync(join(location, "PG_VERSION"));
}

/** Runs PGlite's initdb for `location` in a child process; rejects with the error it printed. */
export function createPgliteDataDir(location: string, startParams: readonly string[]): Promise<void> {
  // Resolved here, as this module's own import of PGlite would be (also inside the server bundle).
  const pgliteUrl = import.meta.resolve("@electric-sql/pglite");
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", CREATE_SCRIPT, pgliteUrl, location, JSON.stringify(startParams)],
      { timeout: PGLITE_CREATE_TIMEOUT_MS, maxBuffer: 1024 * 1024 },
      (error, _stdout, stderr) => {
        if (error) {
          // Node prints the thrown error's own line among the stack and its version banner.
          const lines = stderr.trim().split("\n");
          const said = (lines.find((line) => /Error\b/.test(line)) ?? lines.at(-1) ?? "")
            .trim()
            .slice(0, 500);
          reject(new Error(`creating it failed (${error.message.split("\n")[0]})${said ? `: ${said}` : ""}`));
          return;
        }
        resolve();
      },
    );
  });
}

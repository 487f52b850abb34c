/**
 * Fetches restic 0.14 and 0.18, rest-server and htpasswd once per machine before any e2e test
 * (idempotent; a no-op when .cache/tools is complete). On a machine without apt-get and dpkg
 * the fetch fails: the tests that need these tools then skip and say so, the rest still run
 * (under CI=true the root test command has stopped before, in scripts/prepare-tools.mjs).
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./paths.js";

export function setup(): void {
  try {
    execFileSync("bash", [join(repoRoot, "scripts", "fetch-tools.sh")], { stdio: "inherit" });
  } catch (err) {
    process.stderr.write(
      `e2e: could not fetch restic/rest-server (${err instanceof Error ? err.message : String(err)}); tests that need them are skipped\n`,
    );
  }
}

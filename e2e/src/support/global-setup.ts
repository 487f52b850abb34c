/**
 * Fetches restic 0.14 and 0.18, rest-server and htpasswd once per machine before any e2e test
 * (idempotent; a no-op when .cache/tools is complete).
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./paths.js";

export function setup(): void {
  execFileSync("bash", [join(repoRoot, "scripts", "fetch-tools.sh")], { stdio: "inherit" });
}

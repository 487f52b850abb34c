/**
 * @module support/tools
 * The real third-party binaries e2e runs, fetched from Debian by scripts/fetch-tools.sh into
 * .cache/tools (see the global setup).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./paths.js";

const tools = join(repoRoot, ".cache", "tools");

export const RESTIC = {
  "0.18": join(tools, "restic-0.18", "usr", "bin", "restic"),
  "0.14": join(tools, "restic-0.14", "usr", "bin", "restic"),
} as const;
export type ResticVersion = keyof typeof RESTIC;

export const REST_SERVER = join(tools, "rest-server", "usr", "bin", "restic-rest-server");
export const HTPASSWD_DIR = join(tools, "htpasswd", "usr", "bin");

export function toolsPresent(): boolean {
  return [RESTIC["0.18"], RESTIC["0.14"], REST_SERVER, join(HTPASSWD_DIR, "htpasswd")].every((path) =>
    existsSync(path),
  );
}

/** How a suite's title names the fetched tools it needs. */
export const FETCHED_TOOLS = "restic 0.14/0.18, rest-server and htpasswd (scripts/fetch-tools.sh)";

/**
 * The title suffix of a suite that needs the parts named by `needs` (name → present here):
 * "" when all are present, else " (skipped: needs …)" naming the missing ones. A suite skips
 * exactly when its suffix is not empty, so its title always says why.
 */
export function missingNote(needs: Record<string, boolean>): string {
  const missing = Object.entries(needs)
    .filter(([, present]) => !present)
    .map(([name]) => name);
  return missing.length === 0 ? "" : ` (skipped: needs ${missing.join(", ")})`;
}

/**
 * @module testing/restic-binaries
 * The real restic binaries scripts/prepare-tools.mjs unpacks into `<repo root>/.cache/tools/`.
 * Without CI a test that needs a missing one skips and says why in its title; with CI=true nothing
 * may pass by skipping, so the test runs and fails on the missing binary. Also restic's output
 * recorded in `testdata/restic/` (scripts/record-restic-fixtures.mjs), which a test reads as is:
 * a missing recording fails it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RESTIC_VERSIONS, type ResticVersion, repoRoot, resticBinary } from "@fleetback/agent";

// Where the binaries are is the agent's testing/tools.ts; the server's tests add how they skip.
export { RESTIC_VERSIONS, type ResticVersion, repoRoot, resticBinary };

/** The binary, or a failure that says how to get it (for CI, where a missing tool fails). */
export function requireRestic(version: ResticVersion): string {
  const path = resticBinary(version);
  if (path === undefined) {
    throw new Error(`restic ${version} is missing; node scripts/prepare-tools.mjs fetches it`);
  }
  return path;
}

/** A suite's title and whether it skips: never under CI=true. */
export function resticSuite(title: string, version: ResticVersion): { title: string; skip: boolean } {
  const ci = /^(true|1)$/i.test(process.env.CI ?? "");
  if (ci || resticBinary(version) !== undefined) {
    return { title, skip: false };
  }
  return {
    title: `${title} (skipped: restic ${version} not found; run node scripts/prepare-tools.mjs)`,
    skip: true,
  };
}

/** A file restic's `version` wrote against the local repository, e.g. `diff.stdout`, as text. */
export function recordedOutput(version: string, file: string): string {
  return readFileSync(join(repoRoot(), "testdata", "restic", version, "local", file), "utf8");
}

/**
 * @module testing/tools
 * Locates the real restic binaries that scripts/fetch-tools.sh unpacks into
 * `<repo root>/.cache/tools/` (tests that need them skip, and say why, when they are absent), and
 * the recorded restic output in `<repo root>/testdata/restic/`, which is part of the repository.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const RESTIC_VERSIONS = ["0.18", "0.14"] as const;
export type ResticVersion = (typeof RESTIC_VERSIONS)[number];

export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "pnpm-workspace.yaml"))) {
    const parent = dirname(dir);
    if (parent === dir) {
      throw new Error("pnpm-workspace.yaml not found above the agent package");
    }
    dir = parent;
  }
  return dir;
}

export function resticBinary(version: ResticVersion): string | undefined {
  const path = join(repoRoot(), ".cache", "tools", `restic-${version}`, "usr", "bin", "restic");
  return existsSync(path) ? path : undefined;
}

/** Test title suffix that says why a real-restic test was skipped. */
export function resticNote(version: ResticVersion): string {
  return resticBinary(version) ? "" : ` (skipped: restic ${version} not found; run scripts/fetch-tools.sh)`;
}

/**
 * `<repo root>/testdata/restic`: real restic output recorded by scripts/record-restic-fixtures.mjs
 * and committed, so that the replay tests need nothing outside the repository. Missing is an error.
 */
export function resticFixturesDir(): string {
  const dir = join(repoRoot(), "testdata", "restic");
  if (!existsSync(dir)) {
    throw new Error(`${dir} is missing; it is committed, and scripts/record-restic-fixtures.mjs remakes it`);
  }
  return dir;
}

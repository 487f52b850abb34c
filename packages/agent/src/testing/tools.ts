/**
 * @module testing/tools
 * Locates the real restic binaries that scripts/fetch-tools.sh unpacks into
 * `<repo root>/.cache/tools/`, and the recorded restic output in shared/restic/fixtures. Tests
 * that need them skip, and say why, when they are absent.
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

/** `shared/restic/fixtures`, beside the repository (or inside it, in a CI checkout). */
export function resticFixturesDir(): string | undefined {
  const root = repoRoot();
  return [join(root, "..", "shared", "restic", "fixtures"), join(root, "shared", "restic", "fixtures")].find(
    (dir) => existsSync(dir),
  );
}

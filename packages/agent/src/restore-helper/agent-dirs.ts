/**
 * @module restore-helper/agent-dirs
 * Where a restore may not write: the agent's config (token), state (boot record, update bundles)
 * and install directories, in or over them, after symlinks are resolved. The restore helper checks
 * its argv with this, and the agent's restore job checks the same paths before anything runs, also
 * when no helper is used. The server checks only the normalised path (restore-request.ts).
 */
import { realpathSync } from "node:fs";
import { join, normalize, sep } from "node:path";

/** The absolute paths a restore writes: `<target><path>` for each selected path. */
export function writtenPaths(plan: { target: string; includes: readonly string[] }): string[] {
  const paths = plan.includes.map((path) => normalize(plan.target === "/" ? path : join(plan.target, path)));
  return plan.target === "/" ? paths : [plan.target, ...paths];
}

/** realpath of the longest existing prefix, with the rest appended: where a write would land now. */
export function resolveExisting(path: string, realpath: (p: string) => string = realpathSync): string {
  const parts = normalize(path)
    .split(sep)
    .filter((part) => part !== "");
  for (let keep = parts.length; keep >= 0; keep -= 1) {
    const head = `/${parts.slice(0, keep).join("/")}`;
    try {
      const real = realpath(head);
      return normalize(join(real, ...parts.slice(keep)));
    } catch {
      // not there (yet): try its parent
    }
  }
  return normalize(path);
}

function within(path: string, dir: string): boolean {
  return dir === "/" || path === dir || path.startsWith(`${dir}/`);
}

/**
 * The first protected directory a written path lands in or over (equal, inside, or containing
 * it), after symlinks; undefined when every path is clear.
 */
export function protectedHit(
  written: readonly string[],
  protectedDirs: readonly string[],
  realpath: (p: string) => string = realpathSync,
): { path: string; dir: string } | undefined {
  const dirs = protectedDirs.map((dir) => resolveExisting(dir, realpath));
  for (const path of written) {
    const real = resolveExisting(path, realpath);
    for (const [i, dir] of dirs.entries()) {
      if (within(real, dir) || within(dir, real)) {
        return { path, dir: protectedDirs[i] ?? dir };
      }
    }
  }
  return undefined;
}

/**
 * @module restore-helper/restore-safety
 * What the restore job refuses before restic runs, beyond the shape of the command:
 *
 * - Paths in the agent's own directories (issue 33), wherever the restore writes: a restore of
 *   them to a new directory would hand the agent's token to whoever reads that directory (a
 *   backup of it, a download). A folder above them is restored around them (restore-job.ts).
 * - Writes in or over the agent's own config, state and install directories, after symlinks
 *   (restore-helper/agent-dirs.ts, the same check the restore helper makes), so an operator cannot
 *   plant a boot record or bundle that the launcher would start as root.
 * - restic older than 0.16 follows symlinks that already exist where it writes (one an earlier
 *   restore created, or a local user planted): a restore with it must not meet any. A
 *   new-directory restore is refused unless its target is empty or missing; an in-place restore is
 *   refused when any path it writes is a symlink, passes through one, or contains one (walked on
 *   the host, bounded; too large a tree to check is refused too). Refusing every in-place restore
 *   on 0.14 would leave those hosts with no way back; this refuses only what can be redirected.
 */
import type { Dirent } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join, normalize, sep } from "node:path";
import { agentDirForms, meetAgentDirs, protectedHit, writtenPaths } from "./agent-dirs.js";

/** Entries walked below the in-place paths of one restore with restic < 0.16. */
export const SYMLINK_WALK_LIMIT = 20_000;

/** The refusal for writing `paths` under `target` (`/` in place), or undefined. */
export function agentDirRefusal(
  target: string,
  paths: readonly string[],
  agentDirs: readonly string[],
): string | undefined {
  const hit = protectedHit(writtenPaths({ target, includes: paths }), agentDirs);
  return hit === undefined
    ? undefined
    : `${hit.path} is in or over the agent's own directory ${hit.dir} (after symlinks); nothing was restored`;
}

/** The refusal for restoring `paths` that are or lie in one of the agent's directories, or undefined. */
export function agentDirPathRefusal(
  paths: readonly string[],
  agentDirs: readonly string[],
): string | undefined {
  const forms = agentDirForms(agentDirs);
  for (const path of paths) {
    const dir = meetAgentDirs(normalize(path).replace(/(.)\/$/, "$1"), forms).within;
    if (dir !== undefined) {
      return `${path} is the agent's own directory ${dir} or lies inside it, whose files are never restored; nothing was restored`;
    }
  }
  return undefined;
}

function code(cause: unknown): string | undefined {
  return cause instanceof Error && "code" in cause ? String(cause.code) : undefined;
}

/** The first existing entry of `dir`, undefined when it is empty or missing. */
async function firstEntry(dir: string): Promise<string | undefined> {
  try {
    return (await readdir(dir))[0];
  } catch (cause) {
    if (code(cause) === "ENOENT") {
      return undefined;
    }
    throw cause;
  }
}

/** A symlink at, above or below `path` (which need not exist); "too_many" past the limit. */
async function symlinkOn(path: string, budget: { left: number }): Promise<string | "too_many" | undefined> {
  const parts = normalize(path)
    .split(sep)
    .filter((part) => part !== "");
  let prefix = "/";
  for (const part of parts) {
    prefix = join(prefix, part);
    try {
      const stat = await lstat(prefix);
      if (stat.isSymbolicLink()) {
        return prefix;
      }
      if (!stat.isDirectory()) {
        return undefined;
      }
    } catch (cause) {
      if (code(cause) === "ENOENT" || code(cause) === "ENOTDIR") {
        return undefined; // restic creates the rest itself
      }
      throw cause;
    }
  }
  const stack = [prefix];
  for (let dir = stack.pop(); dir !== undefined; dir = stack.pop()) {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (cause) {
      if (code(cause) === "ENOENT") {
        continue;
      }
      throw cause;
    }
    for (const entry of entries) {
      budget.left -= 1;
      if (budget.left < 0) {
        return "too_many";
      }
      if (entry.isSymbolicLink()) {
        return join(dir, entry.name);
      }
      if (entry.isDirectory()) {
        stack.push(join(dir, entry.name));
      }
    }
  }
  return undefined;
}

const ADVICE = "restic older than 0.16 follows symlinks where it writes; update restic on this host";

/** The refusal for a restore with restic < 0.16 (or of unknown version), or undefined. */
export async function oldResticRefusal(
  inPlace: boolean,
  target: string,
  paths: readonly string[],
): Promise<string | undefined> {
  try {
    if (!inPlace) {
      return (await firstEntry(target)) === undefined
        ? undefined
        : `the restore directory ${target} is not empty (${ADVICE}, or choose a new directory); nothing was restored`;
    }
    const budget = { left: SYMLINK_WALK_LIMIT };
    for (const path of paths) {
      const found = await symlinkOn(path, budget);
      if (found === "too_many") {
        return `the paths to restore hold more than ${SYMLINK_WALK_LIMIT} entries to check for symlinks (${ADVICE}, or restore to a new directory); nothing was restored`;
      }
      if (found !== undefined) {
        return `${found} is a symlink where the restore writes (${ADVICE}, or restore to a new directory); nothing was restored`;
      }
    }
    return undefined;
  } catch (cause) {
    return `cannot check where the restore writes (${cause instanceof Error ? cause.message : String(cause)}); nothing was restored`;
  }
}

/**
 * @module restore-helper/agent-dirs
 * The agent's config (token), state (boot record, update bundles) and install directories, which
 * are never data:
 *
 * - A restore may not write in or over them, after symlinks are resolved (`protectedHit`). The
 *   restore helper checks its argv with this, and the agent's restore job checks the same paths
 *   before anything runs, also when no helper is used.
 * - Nothing read from a snapshot may hold them (issue 33): backups exclude them, and a restore,
 *   tree listing or download meets them through `meetAgentDirs` over `agentDirForms`, the forms a
 *   snapshot names them by. The server refuses the same paths (its hosts/agent-dirs.ts) from the
 *   directories the hello names.
 */
import { realpathSync } from "node:fs";
import { join, normalize, resolve, sep } from "node:path";
import { AGENT_DIR_MAX_LENGTH, AGENT_DIRS_MAX } from "@fleetback/protocol";

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
 * Each directory as configured (made absolute) and, when symlinks lead elsewhere, as resolved:
 * a snapshot holds a directory under the path it was backed up by, which may be either. `/` is
 * dropped, since leaving it out would leave out everything.
 */
export function agentDirForms(
  dirs: readonly string[],
  realpath: (p: string) => string = realpathSync,
): string[] {
  const forms = dirs.flatMap((dir) => {
    const configured = normalize(resolve(dir)).replace(/(.)\/$/, "$1");
    return [configured, resolveExisting(configured, realpath).replace(/(.)\/$/, "$1")];
  });
  return [...new Set(forms)].filter((form) => form !== "/");
}

/**
 * hello.agent_dirs (protocol 12): the forms, within the contract's bounds. Only slash-rooted
 * ones: a Windows path is no snapshot path, and the server keeps to its defaults then.
 */
export function helloAgentDirs(dirs: readonly string[]): string[] {
  return agentDirForms(dirs)
    .filter((dir) => dir.startsWith("/") && dir.length <= AGENT_DIR_MAX_LENGTH)
    .slice(0, AGENT_DIRS_MAX);
}

export interface AgentDirMeeting {
  /** The agent directory `path` is, or lies inside. */
  within: string | undefined;
  /** The agent directories that lie strictly inside `path`, so that a copy of `path` holds them. */
  below: string[];
}

/** How a normalised absolute `path` meets the agent's directories (compared as they are given). */
export function meetAgentDirs(path: string, dirs: readonly string[]): AgentDirMeeting {
  return {
    within: dirs.find((dir) => within(path, dir)),
    below: dirs.filter((dir) => dir !== path && within(dir, path)),
  };
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
    const meeting = meetAgentDirs(resolveExisting(path, realpath), dirs);
    const dir = meeting.within ?? meeting.below[0];
    if (dir !== undefined) {
      return { path, dir: protectedDirs[dirs.indexOf(dir)] ?? dir };
    }
  }
  return undefined;
}

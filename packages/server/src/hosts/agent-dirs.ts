/**
 * @module hosts/agent-dirs
 * The agent's own directories on a host: its config (with the agent token), state (boot record,
 * update bundles) and install directories. They are never data (issue 33), so the server refuses
 * a source group include, a restore path, a tree path and a download path that is one of them or
 * lies inside one, and a restore target that writes into or over one. They are the packaged
 * defaults plus what the host's agent named in its hello (`hello.agent_dirs`, protocol 12). The
 * server cannot see the host's symlinks, so it compares normalised paths; the agent checks the
 * resolved ones (its restore-helper/agent-dirs.ts) and leaves the directories out of what it
 * backs up, restores and lists.
 */
import { posix } from "node:path";
import type { Host } from "@fleetback/db";
import { DEFAULT_AGENT_PATHS } from "@fleetback/installer";
import { AGENT_DIRS_PROTOCOL_VERSION } from "@fleetback/protocol";
import { invalid } from "../errors.js";

export const PACKAGED_AGENT_DIRS: readonly string[] = [
  DEFAULT_AGENT_PATHS.configDir,
  DEFAULT_AGENT_PATHS.stateDir,
  DEFAULT_AGENT_PATHS.bundleDir,
];

/** `..`, `.` and `//` resolved, no trailing slash: how the paths are compared. */
export function normalisedPath(path: string): string {
  return posix.normalize(path).replace(/(.)\/$/, "$1");
}

/** The host's agent directories: the packaged defaults and those its hello named, never `/`. */
export function agentDirsOf(host: Pick<Host, "agentDirs">): string[] {
  const named = host.agentDirs.filter((dir) => dir.startsWith("/")).map(normalisedPath);
  return [...new Set([...PACKAGED_AGENT_DIRS, ...named])].filter((dir) => dir !== "/");
}

function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}

/** The agent directory `path` is or lies inside, if any. */
export function agentDirHolding(path: string, dirs: readonly string[]): string | undefined {
  const normal = normalisedPath(path);
  return dirs.find((dir) => within(normal, dir));
}

/** The agent directories that lie strictly inside `path`: a copy of `path` holds them. */
export function agentDirsBelow(path: string, dirs: readonly string[]): string[] {
  const normal = normalisedPath(path);
  return dirs.filter((dir) => dir !== normal && (normal === "/" || within(dir, normal)));
}

/**
 * Why `path` may not be read out of the host's snapshots (restored, listed, downloaded), or
 * undefined; the caller puts the field name in front.
 */
export function agentDirPathProblem(path: string, dirs: readonly string[]): string | undefined {
  const dir = agentDirHolding(path, dirs);
  return dir === undefined
    ? undefined
    : `${path} is the agent's own directory ${dir} or lies inside it, which holds the host's agent token and is never backed up, restored, listed or downloaded`;
}

/** Throws `invalid`, its message starting with `field`, for the first of `paths` in an agent directory. */
export function refuseAgentDirPaths(field: string, paths: readonly string[], dirs: readonly string[]): void {
  for (const path of paths) {
    const problem = agentDirPathProblem(path, dirs);
    if (problem !== undefined) {
      throw invalid(`${field}: ${problem}`, { field });
    }
  }
}

/**
 * Why a restore to a new directory or a download of `path` of a snapshot of `snapshotPaths` is
 * refused for holding an agent directory, which an agent before AGENT_DIRS_PROTOCOL_VERSION would
 * hand over; else undefined. A newer agent leaves the directories out itself.
 */
export function olderAgentProblem(
  host: Pick<Host, "protocolVersion">,
  path: string,
  dirs: readonly string[],
  snapshotPaths: readonly string[],
): string | undefined {
  if ((host.protocolVersion ?? 0) >= AGENT_DIRS_PROTOCOL_VERSION) {
    return undefined;
  }
  // Only what the snapshot backed up can be in it: a folder above its paths holds no more.
  const backedUp = snapshotPaths.filter((backed) => backed.startsWith("/")).map(normalisedPath);
  const held = agentDirsBelow(path, dirs).filter((dir) =>
    backedUp.some((backed) => backed === "/" || within(dir, backed) || within(backed, dir)),
  );
  return held.length === 0
    ? undefined
    : `${path} holds the agent's own directory ${held.join(", ")}, which this host's agent (protocol ${host.protocolVersion ?? "unknown"}) does not leave out; update the agent to protocol ${AGENT_DIRS_PROTOCOL_VERSION}, or pick the paths around it`;
}

/**
 * @module tree/held-agent-dirs
 * Which of the agent's own directories a snapshot holds below a path, for a download or restore
 * of a folder above them (issue 33). Snapshots taken before agents excluded their directories may
 * hold the agent's token. One `restic ls --no-lock --json <snapshot> <dir>...` of the folders from
 * the path down to each directory's parent answers it (verified on 0.14 and 0.18: restic prints
 * the direct children of every folder named, walking only towards them), in about the fixed cost
 * of opening the repository; the same listing tells a restore which entries lie around them.
 */
import { type LsRunRequest, runLs } from "./ls-run.js";
import { isBelow, parentOf } from "./tree-path.js";

/** Below the server's 60 s wait for a download to start. */
export const HELD_LISTING_TIMEOUT_MS = 55_000;

export interface HeldAgentDirsRequest extends Omit<LsRunRequest, "timeoutMs"> {
  /** Normalised absolute paths of the snapshot. */
  paths: readonly string[];
  /** The agent's directories (agentDirForms) that lie strictly below one of `paths`. */
  dirs: readonly string[];
  timeoutMs?: number;
}

export type HeldAgentDirs =
  | {
      ok: true;
      /** The directories the snapshot holds. */
      held: string[];
      /** The children's paths of every folder listed: the paths and the folders on the way down. */
      children: ReadonlyMap<string, readonly string[]>;
    }
  | { ok: false; error: string };

/** Every folder from `path` down to `dir`'s parent: what must be listed to see `dir` and around it. */
function foldersDown(path: string, dir: string): string[] {
  const folders: string[] = [];
  for (let folder = parentOf(dir); folder !== path && isBelow(path, folder); folder = parentOf(folder)) {
    folders.push(folder);
  }
  return [path, ...folders];
}

export async function findHeldAgentDirs(request: HeldAgentDirsRequest): Promise<HeldAgentDirs> {
  const folders = [
    ...new Set(
      request.paths.flatMap((path) =>
        request.dirs.filter((dir) => isBelow(path, dir)).flatMap((dir) => foldersDown(path, dir)),
      ),
    ),
  ];
  if (folders.length === 0) {
    return { ok: true, held: [], children: new Map() };
  }
  const listed = new Set(folders);
  const children = new Map<string, string[]>(folders.map((folder) => [folder, []]));
  const timeoutMs = request.timeoutMs ?? HELD_LISTING_TIMEOUT_MS;
  const { result, sawSnapshot, error } = await runLs({ ...request, timeoutMs }, folders, (entry) => {
    const folder = parentOf(entry.path);
    if (listed.has(folder) && entry.path !== folder) {
      children.get(folder)?.push(entry.path);
    }
  });
  const failure = "cannot tell whether the snapshot holds the agent's own directories";
  if (result.kind === "invalid_credentials" || result.kind === "spawn_failed") {
    return { ok: false, error: `${failure}: ${result.message}` };
  }
  if (result.timedOut) {
    return { ok: false, error: `${failure}: listing it took longer than ${Math.round(timeoutMs / 1000)} s` };
  }
  if (result.cancelled) {
    return { ok: false, error: `${failure}: the listing was cancelled` };
  }
  if (result.exitCode !== 0 || !sawSnapshot) {
    return {
      ok: false,
      error: `${failure}: ${error ?? `restic ls exited with code ${result.exitCode}`}`,
    };
  }
  const held = request.dirs.filter((dir) => children.get(parentOf(dir))?.includes(dir) === true);
  return { ok: true, held, children };
}

/**
 * The paths that restore all of `path` but the `held` directories: the children of each folder on
 * the way down, other than the way itself. Empty when the folder holds nothing else.
 */
export function pathsAround(
  path: string,
  held: readonly string[],
  children: ReadonlyMap<string, readonly string[]>,
): string[] {
  if (!held.some((dir) => isBelow(path, dir))) {
    return [path];
  }
  return (children.get(path) ?? [])
    .filter((child) => !held.includes(child))
    .flatMap((child) => pathsAround(child, held, children));
}

export type RestoreAround = { ok: true; paths: string[]; held: string[] } | { ok: false; error: string };

/**
 * The paths a restore of `request.paths` asks restic for, with every agent directory the snapshot
 * holds left out: restic refuses `--exclude` beside `--include` (0.14 and 0.18 alike: "exclude
 * and include patterns are mutually exclusive"), so a folder above one is restored as the entries
 * around it. Paths above none are kept as they are, in their order.
 */
export async function restorePathsAround(request: HeldAgentDirsRequest): Promise<RestoreAround> {
  const below = request.dirs.filter((dir) => request.paths.some((path) => isBelow(path, dir)));
  if (below.length === 0) {
    return { ok: true, paths: [...request.paths], held: [] };
  }
  const found = await findHeldAgentDirs({ ...request, dirs: below });
  if (!found.ok) {
    return found;
  }
  const paths = [...new Set(request.paths.flatMap((path) => pathsAround(path, found.held, found.children)))];
  return { ok: true, paths, held: found.held };
}

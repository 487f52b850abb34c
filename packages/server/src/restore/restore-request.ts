/**
 * @module restore/restore-request
 * What an operator asks to restore, checked before anything is sent: a snapshot of this
 * host, or of the other host it restores from (restore-source.ts), from the cached list, at least one absolute path, and either "in place" confirmed by the
 * host's name or a target directory that is absolute or starts with `$HOME`, `${HOME}` or `~/` and
 * uses no other variable. Every problem is reported by field so the wizard can show them all
 * beside the operator's input, and the JSON API names the first.
 */
import { posix } from "node:path";
import { type Database, type Host, type Snapshot, snapshots } from "@fleetback/db";
import { isRestoreTarget } from "@fleetback/protocol";
import { and, eq, or } from "drizzle-orm";
import {
  agentDirHolding,
  agentDirPathProblem,
  agentDirsBelow,
  agentDirsOf,
  olderAgentProblem,
} from "../hosts/agent-dirs.js";
import type { FieldProblem } from "../http/validate.js";
import type { RestoreSource } from "./restore-source.js";

export const DEFAULT_RESTORE_TARGET = "$HOME/fleetback-restore/<job-id>/";
/** Replaced by the job id when the command is sent, so every restore gets a directory of its own. */
export const JOB_ID_PLACEHOLDER = "<job-id>";
export const MAX_RESTORE_PATHS = 1_000;
/** An in-place restore writes every path back where it was. */
export const IN_PLACE_TARGET = "/";

/** The operator's input as typed, kept verbatim for a re-rendered wizard. */
export interface RestoreInput {
  snapshotId: string;
  paths: string[];
  inPlace: boolean;
  targetDir: string;
  confirmHostname: string;
  /** The wizard's "restore onto" choice (issue 38): empty for the snapshot's own host. */
  ontoHostId?: string;
}

export interface RestorePlan {
  snapshot: Snapshot;
  paths: string[];
  inPlace: boolean;
  /** Still holding `<job-id>`; substituted at dispatch. */
  targetDir: string;
  /** The other host whose snapshot this is (issue 38); undefined for the host's own. */
  source?: RestoreSource;
}

/** The agent directory a write to `path` lands in or over, if any. */
function writeHit(path: string, dirs: readonly string[]): string | undefined {
  return agentDirHolding(path, dirs) ?? agentDirsBelow(path, dirs)[0];
}

/**
 * The problem with restoring `paths` in place or under the absolute `targetDir` for the host's
 * agent directories, if any: a path in one is never restored (it holds the token), and no
 * restore writes in or over one (it could plant what the launcher runs as root).
 */
function agentDirProblem(
  host: Pick<Host, "agentDirs" | "protocolVersion">,
  inPlace: boolean,
  /** Undefined for a target only the host can expand ($HOME, ~): the agent checks it then. */
  targetDir: string | undefined,
  paths: readonly string[],
  snapshotPaths: readonly string[],
): FieldProblem | undefined {
  const dirs = agentDirsOf(host);
  for (const path of paths) {
    const problem = agentDirPathProblem(path, dirs);
    if (problem !== undefined) {
      return { field: "paths", message: problem };
    }
  }
  if (!inPlace) {
    if (targetDir !== undefined && posix.normalize(targetDir) === "/") {
      return { field: "target_dir", message: "cannot be / itself; choose in place instead" };
    }
    const written =
      targetDir === undefined ? [] : [targetDir, ...paths.map((path) => posix.join(targetDir, path))];
    for (const place of written) {
      const dir = writeHit(place, dirs);
      if (dir !== undefined) {
        return {
          field: "target_dir",
          message: `would write into or over the agent's own directory ${dir}; choose another directory`,
        };
      }
    }
    for (const path of paths) {
      const problem = olderAgentProblem(host, path, dirs, snapshotPaths);
      if (problem !== undefined) {
        return { field: "paths", message: problem };
      }
    }
    return undefined;
  }
  const hit = paths.find((path) => writeHit(path, dirs) !== undefined);
  return hit === undefined
    ? undefined
    : {
        field: "paths",
        message: `${hit} lies in or over the agent's own directory ${writeHit(hit, dirs)}; it cannot be restored in place`,
      };
}

export type RestoreCheck = { ok: true; plan: RestorePlan } | { ok: false; problems: FieldProblem[] };

/** A cached snapshot of the host by full id or by its short id. */
export async function findHostSnapshot(
  db: Database,
  hostId: string,
  id: string,
): Promise<Snapshot | undefined> {
  const [row] = await db
    .select()
    .from(snapshots)
    .where(and(eq(snapshots.hostId, hostId), or(eq(snapshots.id, id), eq(snapshots.shortId, id))))
    .limit(1);
  return row;
}

/** Unique, in the order given; blank entries (an empty "another path" box) are not paths. */
export function cleanPaths(paths: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const path of paths) {
    const trimmed = path.trim();
    if (trimmed !== "") {
      seen.add(trimmed);
    }
  }
  return [...seen];
}

/**
 * What is wrong with where a restore goes, before any snapshot is looked at: in place needs the
 * host's name typed; a new directory must be one the agent may expand.
 */
export function restoreWhereProblem(
  host: Pick<Host, "name">,
  input: Pick<RestoreInput, "inPlace" | "confirmHostname" | "targetDir">,
): FieldProblem | undefined {
  if (input.inPlace) {
    // Against the name the host was enrolled under, which no hello changes (the reported
    // hostname is kept beside it): an agent cannot make itself confirmable as another host.
    return input.confirmHostname.trim() === host.name
      ? undefined
      : {
          field: "confirm_hostname",
          message: `type the host name ${host.name} to confirm that files on it are overwritten`,
        };
  }
  const targetDir = input.targetDir.trim();
  if (targetDir === "") {
    return { field: "target_dir", message: "is required for a restore to a new directory" };
  }
  return isRestoreTarget(targetDir)
    ? undefined
    : {
        field: "target_dir",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell variable form, not a template
        message: "must be an absolute path or start with $HOME, ${HOME} or ~/, and use no other variable",
      };
}

export async function checkRestore(
  db: Database,
  host: Pick<Host, "id" | "name" | "agentDirs" | "protocolVersion" | "toolVersion">,
  input: RestoreInput,
  source?: RestoreSource,
): Promise<RestoreCheck> {
  const problems: FieldProblem[] = [];
  const snapshotId = input.snapshotId.trim();
  let snapshot: Snapshot | undefined;
  if (snapshotId === "") {
    problems.push({ field: "snapshot_id", message: "choose a snapshot" });
  } else {
    snapshot = await findHostSnapshot(db, source?.id ?? host.id, snapshotId);
    if (!snapshot) {
      const owner = source === undefined ? "this host" : source.name;
      problems.push({ field: "snapshot_id", message: `${snapshotId} is not a snapshot of ${owner}` });
    }
  }

  const paths = cleanPaths(input.paths);
  const relative = paths.filter((path) => !path.startsWith("/"));
  if (paths.length === 0) {
    problems.push({ field: "paths", message: "tick or type at least one path to restore" });
  } else if (relative.length > 0) {
    problems.push({
      field: "paths",
      message: `must be absolute paths inside the snapshot (starting with /): ${relative.join(", ")}`,
    });
  } else if (paths.length > MAX_RESTORE_PATHS) {
    problems.push({ field: "paths", message: `at most ${MAX_RESTORE_PATHS} paths per restore` });
  } else if (paths.some((path) => /[\0\r\n]/.test(path))) {
    problems.push({ field: "paths", message: "a path may not contain control characters" });
  }

  const whereTo = restoreWhereProblem(host, input);
  if (whereTo !== undefined) {
    problems.push(whereTo);
  }
  const targetDir = input.inPlace ? IN_PLACE_TARGET : input.targetDir.trim();
  // $HOME and ~ are known only on the host: the agent checks those targets once expanded.
  const absoluteTarget = input.inPlace || targetDir.startsWith("/");
  const checkable = !problems.some((problem) => problem.field === "paths" || problem.field === "target_dir");
  const agentDir = checkable
    ? agentDirProblem(
        host,
        input.inPlace,
        absoluteTarget ? targetDir : undefined,
        paths,
        snapshot?.paths ?? [],
      )
    : undefined;
  if (agentDir !== undefined) {
    problems.push(agentDir);
  }
  // The other host's own directories hold its agent token: never handed to this host.
  const sourceDir =
    source === undefined || !checkable
      ? undefined
      : paths
          .map((path) => agentDirPathProblem(path, agentDirsOf(source)))
          .find((problem) => problem !== undefined);
  if (sourceDir !== undefined) {
    problems.push({ field: "paths", message: `on ${source?.name}: ${sourceDir}` });
  }

  if (problems.length > 0 || !snapshot) {
    return { ok: false, problems };
  }
  const plan: RestorePlan = { snapshot, paths, inPlace: input.inPlace, targetDir };
  return { ok: true, plan: source === undefined ? plan : { ...plan, source } };
}

export function targetForJob(targetDir: string, jobId: string): string {
  return targetDir.replaceAll(JOB_ID_PLACEHOLDER, jobId);
}

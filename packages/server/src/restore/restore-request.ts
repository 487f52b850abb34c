/**
 * @module restore/restore-request
 * What an operator asks to restore, checked before anything is sent: a snapshot of this
 * host (from its cached list), at least one absolute path, and either "in place" confirmed by the
 * host's name or a target directory that is absolute or starts with `$HOME`, `${HOME}` or `~/` and
 * uses no other variable. Every problem is reported by field so the wizard can show them all
 * beside the operator's input, and the JSON API names the first.
 */
import { posix } from "node:path";
import { type Database, type Snapshot, snapshots } from "@fleetback/db";
import { DEFAULT_AGENT_PATHS } from "@fleetback/installer";
import { isRestoreTarget } from "@fleetback/protocol";
import { and, eq, or } from "drizzle-orm";
import type { FieldProblem } from "../http/validate.js";

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
}

export interface RestorePlan {
  snapshot: Snapshot;
  paths: string[];
  inPlace: boolean;
  /** Still holding `<job-id>`; substituted at dispatch. */
  targetDir: string;
}

/**
 * Where the installed agent keeps its config (token), state (boot record, update bundles) and
 * code: a restore that writes into them could plant what the launcher runs as root. The server
 * cannot see the host's symlinks, so it checks the normalised path; the agent and its restore
 * helper check the resolved one (restore-helper/agent-dirs.ts).
 */
export const AGENT_DIRS: readonly string[] = [
  DEFAULT_AGENT_PATHS.configDir,
  DEFAULT_AGENT_PATHS.stateDir,
  DEFAULT_AGENT_PATHS.bundleDir,
];

function within(path: string, dir: string): boolean {
  return dir === "/" || path === dir || path.startsWith(`${dir}/`);
}

/** The agent directory `path` lies in or contains (after `..` and `//` are normalised), if any. */
export function agentDirHit(path: string): string | undefined {
  const normal = posix.normalize(path).replace(/(.)\/$/, "$1");
  return AGENT_DIRS.find((dir) => within(normal, dir) || within(dir, normal));
}

/** The problem with writing `paths` in place or under the absolute `targetDir`, if any. */
function agentDirProblem(
  inPlace: boolean,
  targetDir: string,
  paths: readonly string[],
): FieldProblem | undefined {
  if (!inPlace) {
    if (posix.normalize(targetDir) === "/") {
      return { field: "target_dir", message: "cannot be / itself; choose in place instead" };
    }
    for (const written of [targetDir, ...paths.map((path) => posix.join(targetDir, path))]) {
      const dir = agentDirHit(written);
      if (dir !== undefined) {
        return {
          field: "target_dir",
          message: `would write into or over the agent's own directory ${dir}; choose another directory`,
        };
      }
    }
    return undefined;
  }
  const hit = paths.find((path) => agentDirHit(path) !== undefined);
  return hit === undefined
    ? undefined
    : {
        field: "paths",
        message: `${hit} lies in or over the agent's own directory ${agentDirHit(hit)}; it cannot be restored in place`,
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

export async function checkRestore(
  db: Database,
  host: { id: string; name: string },
  input: RestoreInput,
): Promise<RestoreCheck> {
  const problems: FieldProblem[] = [];
  const snapshotId = input.snapshotId.trim();
  let snapshot: Snapshot | undefined;
  if (snapshotId === "") {
    problems.push({ field: "snapshot_id", message: "choose a snapshot" });
  } else {
    snapshot = await findHostSnapshot(db, host.id, snapshotId);
    if (!snapshot) {
      problems.push({ field: "snapshot_id", message: `${snapshotId} is not a snapshot of this host` });
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

  let targetDir = IN_PLACE_TARGET;
  if (input.inPlace) {
    // Against the name the host was enrolled under, which no hello changes (the reported
    // hostname is kept beside it): an agent cannot make itself confirmable as another host.
    if (input.confirmHostname.trim() !== host.name) {
      problems.push({
        field: "confirm_hostname",
        message: `type the host name ${host.name} to confirm that files on it are overwritten`,
      });
    }
  } else {
    targetDir = input.targetDir.trim();
    if (targetDir === "") {
      problems.push({ field: "target_dir", message: "is required for a restore to a new directory" });
    } else if (!isRestoreTarget(targetDir)) {
      problems.push({
        field: "target_dir",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell variable form, not a template
        message: "must be an absolute path or start with $HOME, ${HOME} or ~/, and use no other variable",
      });
    }
  }
  // $HOME and ~ are known only on the host: the agent checks those targets once expanded.
  const absoluteTarget = input.inPlace || targetDir.startsWith("/");
  const checkable = !problems.some((problem) => problem.field === "paths" || problem.field === "target_dir");
  const agentDir = absoluteTarget && checkable ? agentDirProblem(input.inPlace, targetDir, paths) : undefined;
  if (agentDir !== undefined) {
    problems.push(agentDir);
  }

  if (problems.length > 0 || !snapshot) {
    return { ok: false, problems };
  }
  return { ok: true, plan: { snapshot, paths, inPlace: input.inPlace, targetDir } };
}

export function targetForJob(targetDir: string, jobId: string): string {
  return targetDir.replaceAll(JOB_ID_PLACEHOLDER, jobId);
}

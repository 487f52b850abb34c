/**
 * @module jobs/restore-evidence
 * Whether a restore wrote anything, for restic that does not say so itself. Up to 0.15 restic
 * prints no summary and no per-file lines (0.14 prints one `restoring <Snapshot ...>` line, -vv or
 * not) and exits 0 when its includes match nothing, having written nothing: the job said
 * "succeeded" and restored nothing (issue 31). So the agent looks at the places a restore writes,
 * `<target>/<include>` (the include itself in place), before and after: restic creates what is
 * missing and sets mode and times on every node it restores, which changes the inode's ctime. A
 * place still missing afterwards, or still the same inode with the same ctime, was not written.
 * A place the agent cannot stat (the restore helper writes where the agent may not look) proves
 * nothing, and the restore then keeps restic's word.
 */
import { lstat } from "node:fs/promises";
import { join } from "node:path";

type Mark = { kind: "missing" } | { kind: "present"; ino: bigint; ctimeNs: bigint } | { kind: "unknown" };

export type RestoreWrites = "nothing" | "written" | "unknown";

export interface RestorePlaces {
  /** What the restore did to the places marked before it ran. */
  writes(): Promise<RestoreWrites>;
}

async function markOf(path: string): Promise<Mark> {
  try {
    const stat = await lstat(path, { bigint: true });
    return { kind: "present", ino: stat.ino, ctimeNs: stat.ctimeNs };
  } catch (cause) {
    const code = cause instanceof Error && "code" in cause ? cause.code : undefined;
    return code === "ENOENT" || code === "ENOTDIR" ? { kind: "missing" } : { kind: "unknown" };
  }
}

function compare(before: Mark, after: Mark): RestoreWrites {
  if (before.kind === "unknown" || after.kind === "unknown") {
    return "unknown";
  }
  if (after.kind === "missing") {
    return "nothing";
  }
  return before.kind === "present" && before.ino === after.ino && before.ctimeNs === after.ctimeNs
    ? "nothing"
    : "written";
}

/** Marks where a restore into `target` (`/` in place) of `includes` writes; call before restic runs. */
export async function markRestorePlaces(target: string, includes: readonly string[]): Promise<RestorePlaces> {
  const places = includes.map((include) => join(target, include));
  const before = await Promise.all(places.map(markOf));
  return {
    async writes() {
      const after = await Promise.all(places.map(markOf));
      const verdicts = places.map((_place, index) => {
        const earlier = before[index];
        const later = after[index];
        return earlier === undefined || later === undefined ? "unknown" : compare(earlier, later);
      });
      if (verdicts.includes("written")) {
        return "written";
      }
      return verdicts.includes("unknown") ? "unknown" : "nothing";
    },
  };
}

const LISTED_PATHS = 5;

/** The job's error when the snapshot holds none of the paths asked for. */
export function nothingMatchedError(snapshotId: string, paths: readonly string[]): string {
  const listed = paths.slice(0, LISTED_PATHS).join(", ");
  const more = paths.length > LISTED_PATHS ? ` and ${paths.length - LISTED_PATHS} more` : "";
  return `nothing in snapshot ${snapshotId} matches ${listed}${more}: no file was restored`;
}

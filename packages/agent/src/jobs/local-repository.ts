/**
 * @module jobs/local-repository
 * A repository on a local path (`/srv/restic`, a mounted disk) needs the agent to write there:
 * restic takes a lock file even to read. The installed unit keeps the whole filesystem read-only
 * except the agent's own directories (`ProtectSystem=strict`), so such a path must be added to
 * its `ReadWritePaths`. Checked before restic runs, so the job fails with one sentence naming the
 * fix instead of restic's "read-only file system" deep in the log.
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { dirname } from "node:path";

/** The directory of a local repository URL (`/path` or `local:/path`); undefined for any other backend. */
export function localRepositoryPath(url: string): string | undefined {
  const path = url.startsWith("local:") ? url.slice("local:".length) : url;
  return path.startsWith("/") ? path : undefined;
}

export function readOnlyRepositoryError(path: string): string {
  return `the repository ${path} is on a path this agent may not write (its systemd unit keeps everything but its own directories read-only): re-run the installer with --repo-path ${path}, or add ReadWritePaths=${path} with systemctl edit fleetback-agent`;
}

/** One sentence when the agent cannot write where the repository is (or would be created); else undefined. */
export async function localRepositoryProblem(url: string): Promise<string | undefined> {
  const path = localRepositoryPath(url);
  if (path === undefined) {
    return undefined;
  }
  let existing = path;
  for (;;) {
    try {
      await stat(existing);
      break;
    } catch {
      const parent = dirname(existing);
      if (parent === existing) {
        return undefined;
      }
      existing = parent;
    }
  }
  try {
    await access(existing, constants.W_OK);
    return undefined;
  } catch (cause) {
    const code = cause instanceof Error && "code" in cause ? cause.code : undefined;
    return code === "EROFS" ? readOnlyRepositoryError(path) : undefined;
  }
}

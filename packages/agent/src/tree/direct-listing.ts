/**
 * @module tree/direct-listing
 * One directory of a snapshot, straight from restic: `restic ls --no-lock --json <snapshot> <dir>`
 * prints the snapshot, the directory's own node and its direct children only (verified on 0.14 and
 * 0.18; testdata/restic `ls-dir`), in about the fixed cost of opening the repository. The output is
 * read line by line and only the children of the asked page are kept (tree-page.ts), so a directory
 * of any size costs one page of memory.
 */
import type { TreeEntry, TreeListResult } from "@fleetback/protocol";
import { type LsRunRequest, runLs } from "./ls-run.js";
import { createTreePage, type TreePage } from "./tree-page.js";
import { parentOf } from "./tree-path.js";

/** The reply for a listing: one page of the children, or why there are none to show. */
export function resultOf(dir: string, self: TreeEntry | undefined, page: TreePage): TreeListResult {
  if (dir !== "/" && self === undefined) {
    return { error: `no such directory in the snapshot: ${dir}` };
  }
  if (self !== undefined && self.type !== "dir") {
    return { error: `not a directory: ${dir}` };
  }
  return page.result();
}

export interface DirectListingRequest extends LsRunRequest {
  dir: string;
  /** Only children whose name sorts after this one (tree.list `after`). */
  after?: string | undefined;
}

export interface DirectListing {
  reply: TreeListResult;
  /** restic opened the repository and found the snapshot (so a full index can be built). */
  snapshotFound: boolean;
}

export async function listDirectory(request: DirectListingRequest): Promise<DirectListing> {
  const failedWith = (error: string): DirectListing => ({ reply: { error }, snapshotFound: false });
  const page = createTreePage(request.after);
  let self: TreeEntry | undefined;
  const { result, sawSnapshot, error } = await runLs(request, [request.dir], (entry) => {
    if (entry.path === request.dir) {
      self = entry;
    } else if (parentOf(entry.path) === request.dir) {
      page.add(entry);
    }
  });
  if (result.kind === "invalid_credentials") {
    return failedWith(result.message);
  }
  if (result.kind === "spawn_failed") {
    return failedWith(result.missing ? `restic not found (${request.restic.command})` : result.message);
  }
  if (result.timedOut) {
    return failedWith(`listing ${request.dir} took longer than ${Math.round(request.timeoutMs / 1000)} s`);
  }
  if (result.cancelled) {
    return failedWith("listing cancelled: the agent is shutting down");
  }
  if (result.exitCode !== 0 || !sawSnapshot) {
    return failedWith(error ?? `restic ls exited with code ${result.exitCode ?? result.signal ?? "unknown"}`);
  }
  return { reply: resultOf(request.dir, self, page), snapshotFound: true };
}

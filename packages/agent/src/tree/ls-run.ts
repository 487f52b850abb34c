/**
 * @module tree/ls-run
 * One `restic ls --no-lock --json <snapshot> <path>...` run for the listings that name the
 * folders they want (a directory page, the folders around the agent's own directories): each node
 * is handed on as it is read, and the run reports whether restic found the snapshot at all, since
 * 0.14 exits 0 for an unknown one and only says `Ignoring "<id>": no matching ID ...`.
 */
import { type Repository, renderStderrLine, type TreeEntry } from "@fleetback/protocol";
import { createErrorCollector } from "../restic/error-collector.js";
import type { BandwidthCaps, Restic, ResticResult } from "../restic/restic.js";
import { parseLsLine } from "./ls-output.js";

export interface LsRunRequest {
  restic: Restic;
  repository: Repository;
  caps: BandwidthCaps;
  snapshotId: string;
  signal?: AbortSignal;
  timeoutMs: number;
}

export interface LsRun {
  result: ResticResult;
  sawSnapshot: boolean;
  /** The stderr text that best explains a failure, if restic printed one. */
  error: string | undefined;
}

export async function runLs(
  request: LsRunRequest,
  paths: readonly string[],
  onNode: (entry: TreeEntry) => void,
): Promise<LsRun> {
  const errors = createErrorCollector();
  let sawSnapshot = false;
  const result = await request.restic.run({
    subcommand: "ls",
    args: ["--no-lock", request.snapshotId, ...paths],
    repository: request.repository,
    caps: request.caps,
    json: true,
    signal: request.signal,
    timeoutMs: request.timeoutMs,
    onLine: (line) => {
      if (line.stream === "stderr") {
        errors.observe("stderr", renderStderrLine(line.text));
        return;
      }
      const parsed = parseLsLine(line.text);
      if (parsed.kind === "snapshot") {
        sawSnapshot = true;
      } else if (parsed.kind === "node") {
        onNode(parsed.entry);
      }
    },
  });
  return { result, sawSnapshot, error: errors.best() };
}

/**
 * @module testing/backup-run
 * Runs the backup job through runJobForTest with the three restic runs it makes (backup, then
 * snapshots and stats after job.finished) replayed or stood in for, and records what it asked of
 * the browse index prebuild and the file catalogue.
 */
import type { CommandRunBackup } from "@fleetback/protocol";
import { createBackupJob } from "../jobs/backup-job.js";
import type { RepositoryJobDeps } from "../jobs/repository-job.js";
import type { Recording } from "../restic/replay-adapter.js";
import type { ProcessResult, ProcessSpec } from "../restic/runner.js";
import type { CatalogRequest } from "../tree/catalog-catch-up.js";
import { fixture, type JobTestOptions, type JobTestRun, recordedScenario, runJobForTest } from "./job-run.js";

export function backupCommand(overrides: Partial<CommandRunBackup> = {}): CommandRunBackup {
  return {
    job_id: "01M807SKJ8H7QEZZS1A0ZWSK9T",
    kind: "backup",
    requires_admin_creds: false,
    includes: [recordedScenario("0.18.0").tree],
    excludes: [],
    tag: "t1",
    ...overrides,
  };
}

export interface BackupRun extends JobTestRun {
  /** How many snapshot reports had gone out when the outcome (job.finished) came back. */
  reportsAtFinish: number;
  /** The snapshots whose browse index the backup asked for, and whether its signal was aborted. */
  prebuilt: { snapshotId: string; aborted: boolean }[];
  /** The file catalogue runs the backup asked for (after its prebuild). */
  catalogued: CatalogRequest[];
}

export interface BackupRunOptions
  extends Pick<
    JobTestOptions,
    "msPerLine" | "hostCaps" | "signal" | "realHooks" | "timers" | "onLog" | "abortAfterFinishWith"
  > {
  command?: CommandRunBackup;
  backup: Recording;
  snapshots?: Recording;
  stats?: Recording;
  /** Runs `restic backup` in place of its recording. */
  backupRun?: (spec: ProcessSpec) => Promise<ProcessResult>;
  /** Runs `restic snapshots` in place of its recording. */
  snapshotsRun?: (spec: ProcessSpec) => Promise<ProcessResult>;
  /** Runs `restic stats` in place of its recording. */
  statsRun?: (spec: ProcessSpec) => Promise<ProcessResult>;
  /** Gives the job a prebuildTreeIndex that records its calls (the agent's default). */
  prebuild?: boolean;
  /** What the prebuild resolves to (default: `/index/<snapshot id>`, an index that was built). */
  prebuiltDir?: (snapshotId: string) => string | undefined;
  /** The agent's own directories (default: none). */
  agentDirs?: string[];
}

export async function runBackup(options: BackupRunOptions): Promise<BackupRun> {
  const { command, backup, snapshots, stats, backupRun, snapshotsRun, statsRun, prebuild, ...rest } = options;
  const prebuilt: BackupRun["prebuilt"] = [];
  const catalogued: BackupRun["catalogued"] = [];
  const create = (deps: RepositoryJobDeps) =>
    createBackupJob({
      ...deps,
      ...(prebuild
        ? {
            prebuildTreeIndex: async (snapshotId: string, signal: AbortSignal) => {
              prebuilt.push({ snapshotId, aborted: signal.aborted });
              return (options.prebuiltDir ?? ((id) => `/index/${id}`))(snapshotId);
            },
            catalogue: async (request: CatalogRequest) => {
              catalogued.push(request);
            },
          }
        : {}),
      agentDirs: options.agentDirs ?? [],
    });
  const ran = await runJobForTest(create, command ?? backupCommand(), {
    ...rest,
    replay: (subcommand) =>
      subcommand === "stats"
        ? (stats ?? fixture("0.18.0", "stats-raw"))
        : subcommand === "snapshots"
          ? (snapshots ?? { stdout: "[]", stderr: "", exitCode: 0 })
          : backup,
    runs: { backup: backupRun, snapshots: snapshotsRun, stats: statsRun },
  });
  return { ...ran, reportsAtFinish: ran.finishedWith.reports, prebuilt, catalogued };
}

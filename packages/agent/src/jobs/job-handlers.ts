/**
 * @module jobs/job-handlers
 * Which job kinds this agent version runs. Every kind is listed; `undefined` makes the queue
 * refuse it at once with "<kind> is not supported by this agent version", which is the truth
 * until its handler lands here.
 */
import { type BackupJobDeps, createBackupJob } from "./backup-job.js";
import { createCheckJob } from "./check-job.js";
import { type CopyJobDeps, createCopyJob } from "./copy-job.js";
import { createDiffJob } from "./diff-job.js";
import { createDrillJob, type DrillJobDeps } from "./drill-job.js";
import { createForgetJob } from "./forget-job.js";
import type { InitJobDeps } from "./init-job.js";
import { createInitJob } from "./init-job.js";
import type { JobHandlers } from "./job-types.js";
import { createPruneJob } from "./prune-job.js";
import { createRestoreJob, type RestoreJobDeps } from "./restore-job.js";
import { reportSnapshotList } from "./snapshot-listing.js";
import { createUnlockJob } from "./unlock-job.js";

export type JobHandlerDeps = InitJobDeps &
  RestoreJobDeps &
  Pick<DrillJobDeps, "stateDir" | "random" | "freeBytes"> &
  Pick<CopyJobDeps, "mirrorProbeTimeoutMs"> &
  Pick<BackupJobDeps, "prebuildTreeIndex" | "catalogue"> & {
    /**
     * Restores go through the restore helper (restore-helper/): its restic, and no target dir or
     * local-repository check of the agent's own, since the helper writes where the agent may not.
     */
    restoreVia?: Pick<RestoreJobDeps, "restic">;
  };

export function createJobHandlers(deps: JobHandlerDeps): JobHandlers {
  return {
    backup: createBackupJob(deps),
    forget: createForgetJob(deps),
    prune: createPruneJob(deps),
    check: createCheckJob(deps),
    unlock: createUnlockJob(deps),
    init: createInitJob({ ...deps, listSnapshots: (run, context) => reportSnapshotList(deps, run, context) }),
    restore: createRestoreJob(
      deps.restoreVia === undefined
        ? deps
        : {
            ...deps,
            ...deps.restoreVia,
            listRestic: deps.restic,
            makeTargetDir: async () => {},
            repositoryProblem: undefined,
          },
    ),
    diff: createDiffJob(deps),
    // The agent's own restic, never the restore helper: a drill writes only into the state dir.
    drill: createDrillJob(deps),
    // The agent's own restic: a copy reads one repository and writes another, nothing on the host.
    copy: createCopyJob(deps),
  };
}

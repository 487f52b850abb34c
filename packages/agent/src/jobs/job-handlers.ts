/**
 * @module jobs/job-handlers
 * Which job kinds this agent version runs. Every kind is listed; `undefined` makes the queue
 * refuse it at once with "<kind> is not supported by this agent version", which is the truth
 * until its handler lands here.
 */
import { type BackupJobDeps, createBackupJob } from "./backup-job.js";
import type { InitJobDeps } from "./init-job.js";
import { createInitJob } from "./init-job.js";
import type { JobHandlers } from "./job-types.js";

export type JobHandlerDeps = InitJobDeps & BackupJobDeps;

export function createJobHandlers(deps: JobHandlerDeps): JobHandlers {
  return {
    backup: createBackupJob(deps),
    forget: undefined,
    prune: undefined,
    check: undefined,
    unlock: undefined,
    init: createInitJob(deps),
    restore: undefined,
    diff: undefined,
  };
}

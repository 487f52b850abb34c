/**
 * @module testing/start-backup-test-support
 * A backup started the way run-now and schedule fires start one (jobs/start-job.ts, queued when
 * the host is offline), answered as a BackupOutcome: for tests that need a backup or its pending
 * run without going through a route or a fire.
 */
import type { ActorKind, SourceGroup } from "@fleetback/db";
import { startJob } from "../jobs/start-job.js";
import {
  type BackupDeps,
  type BackupOutcome,
  backupSpec,
  loadHostHooks,
} from "../sources/dispatch-backup.js";

export async function startBackup(
  deps: BackupDeps,
  request: { hostId: string; actorKind: ActorKind },
  group: SourceGroup,
): Promise<BackupOutcome> {
  const host = await loadHostHooks(deps, request.hostId);
  const started = await startJob(deps, backupSpec(deps, { ...request, offline: "queue" }, group, host));
  if (started.ok) {
    return { outcome: "dispatched", jobId: started.job.id };
  }
  return started.pendingRunId === undefined
    ? { outcome: "offline" }
    : { outcome: "queued", pendingRunId: started.pendingRunId };
}

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
import type { CreateGroupBody } from "../sources/source-group-schema.js";
import { createTestGroup, seedHost } from "./seed.js";
import type { TestDeps } from "./test-deps.js";

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

/** A new offline host's backup of its group "etc" (with `retry`), started by `actorKind`: queued. */
export async function queueOfflineBackup(
  deps: TestDeps,
  retry: Pick<CreateGroupBody, "retry_max" | "retry_backoff_seconds">,
  actorKind: ActorKind,
) {
  const { host } = await seedHost(deps);
  const group = await createTestGroup(deps, host.id, retry);
  const queued = await startBackup(deps, { hostId: host.id, actorKind }, group);
  return { host, group, queued };
}

/**
 * @module retries/pending-runs
 * The offline-retry queue. A row is one backup of one group waiting for
 * another try; `attempt` counts the retries made so far and is bounded by the group's retry_max.
 * Retry number n is due `retry_backoff_seconds * 2^(n-1)` after the previous try.
 */
import { type ActorKind, type Database, type PendingRun, pendingRuns, sourceGroups } from "@fleetback/db";
import { asc, eq } from "drizzle-orm";
import type { Clock } from "../clock.js";
import type { Ids } from "../ids.js";
import type { RunCaps } from "./run-caps.js";

/**
 * The reason of a run queued, or rescheduled, because its host was offline: such a run is sent as
 * soon as the host says hello (sources/retry-ticker.ts), not at its backoff slot.
 */
export const HOST_OFFLINE_REASON = "host offline";

/** Delay before retry number `retry` (1-based). */
export function retryDelayMs(backoffSeconds: number, retry: number): number {
  return backoffSeconds * 1000 * 2 ** Math.max(0, retry - 1);
}

export interface QueueInput {
  hostId: string;
  group: { id: string; retryMax: number; retryBackoffSeconds: number };
  actorKind: ActorKind;
  actorUserId?: string | null;
  scheduleId?: string | null;
  /** Retries already made for this run (0 for a run that never got out). */
  attemptsMade: number;
  lastJobId?: string | null;
  reason: string;
  /** A run-now's own caps (KiB/s), kept for the retry. */
  runCaps?: RunCaps;
}

/** Queues the next retry; undefined when the group's retry_max is already used up. */
export async function queuePendingRun(
  deps: { db: Database; clock: Clock; ids: Ids },
  input: QueueInput,
): Promise<PendingRun | undefined> {
  if (input.attemptsMade >= input.group.retryMax) {
    return undefined;
  }
  const now = deps.clock.now();
  const [row] = await deps.db
    .insert(pendingRuns)
    .values({
      id: deps.ids.ulid(now),
      hostId: input.hostId,
      sourceGroupId: input.group.id,
      scheduleId: input.scheduleId ?? null,
      actorKind: input.actorKind,
      actorUserId: input.actorUserId ?? null,
      attempt: input.attemptsMade,
      nextAttemptAt: new Date(
        now.getTime() + retryDelayMs(input.group.retryBackoffSeconds, input.attemptsMade + 1),
      ),
      lastJobId: input.lastJobId ?? null,
      reason: input.reason.slice(0, 500),
      bandwidthUpKbps: input.runCaps?.up ?? null,
      bandwidthDownKbps: input.runCaps?.down ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return row;
}

export interface PendingRunView extends PendingRun {
  groupName: string;
  retryMax: number;
}

export async function listPendingRuns(db: Database, hostId: string): Promise<PendingRunView[]> {
  const rows = await db
    .select({ run: pendingRuns, groupName: sourceGroups.name, retryMax: sourceGroups.retryMax })
    .from(pendingRuns)
    .innerJoin(sourceGroups, eq(sourceGroups.id, pendingRuns.sourceGroupId))
    .where(eq(pendingRuns.hostId, hostId))
    .orderBy(asc(pendingRuns.nextAttemptAt), asc(pendingRuns.id));
  return rows.map((row) => ({ ...row.run, groupName: row.groupName, retryMax: row.retryMax }));
}

export function pendingRunJson(run: PendingRunView) {
  return {
    id: run.id,
    source_group_id: run.sourceGroupId,
    source_group_name: run.groupName,
    schedule_id: run.scheduleId,
    actor_kind: run.actorKind,
    attempt: run.attempt,
    retry_max: run.retryMax,
    next_attempt_at: run.nextAttemptAt,
    last_job_id: run.lastJobId,
    reason: run.reason,
    bandwidth_up_kbps: run.bandwidthUpKbps,
    bandwidth_down_kbps: run.bandwidthDownKbps,
  };
}

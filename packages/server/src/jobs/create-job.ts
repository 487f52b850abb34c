/**
 * @module jobs/create-job
 * Inserts a job row in status `queued`. Sending its command is a separate step (dispatch-job.ts)
 * so that a caller can create the row inside its own transaction (auto-init's lock).
 */
import { type ActorKind, type Database, type Job, type JobKind, jobs } from "@fleetback/db";
import type { ServerDeps } from "../deps.js";

export interface NewJobInput {
  hostId: string;
  kind: JobKind;
  actorKind: ActorKind;
  actorUserId?: string | null;
  /** The schedule that fired the job (actor_kind schedule). */
  scheduledId?: string | null;
  sourceGroupId?: string | null;
  /** Non-secret dispatch parameters, shown on the job page; never credentials or hooks. */
  params?: Record<string, unknown>;
}

/** `db` may be a transaction of the caller. */
export async function createJob(
  deps: Pick<ServerDeps, "db" | "clock" | "ids">,
  input: NewJobInput,
  db: Database = deps.db,
): Promise<Job> {
  const now = deps.clock.now();
  const [row] = await db
    .insert(jobs)
    .values({
      id: deps.ids.jobId(now),
      hostId: input.hostId,
      kind: input.kind,
      status: "queued",
      actorKind: input.actorKind,
      actorUserId: input.actorUserId ?? null,
      scheduledId: input.scheduledId ?? null,
      sourceGroupId: input.sourceGroupId ?? null,
      params: input.params ?? {},
      createdAt: now,
    })
    .returning();
  if (!row) {
    throw new Error("insert into jobs returned no row");
  }
  return row;
}

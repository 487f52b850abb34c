/**
 * @module jobs/create-job
 * Inserts a job row in status `queued`: for start-job.ts, the one way a job starts, inside its
 * transaction; elsewhere only for a job that records a backup that never ran (retry-ticker.ts).
 */
import { type ActorKind, type Database, type Job, type JobKind, jobs } from "@fleetback/db";
import type { ServerDeps } from "../deps.js";

export interface NewJobInput {
  /** Minted by a caller whose command names the job before the row exists (mintJobId). */
  id?: string;
  hostId: string;
  kind: JobKind;
  actorKind: ActorKind;
  actorUserId?: string | null;
  /** The schedule that fired the job (actor_kind schedule). */
  scheduledId?: string | null;
  sourceGroupId?: string | null;
  /** Non-secret dispatch parameters, shown on the job page; never credentials or hooks. */
  params?: Record<string, unknown>;
  /** The keeper that runs a protected host's job (keepers/); null or absent: the host itself. */
  runnerHostId?: string | null;
}

/** A job id for a row not created yet, so the command that names it can be built first. */
export function mintJobId(deps: Pick<ServerDeps, "clock" | "ids">): string {
  return deps.ids.jobId(deps.clock.now());
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
      id: input.id ?? deps.ids.jobId(now),
      hostId: input.hostId,
      kind: input.kind,
      status: "queued",
      actorKind: input.actorKind,
      actorUserId: input.actorUserId ?? null,
      scheduledId: input.scheduledId ?? null,
      sourceGroupId: input.sourceGroupId ?? null,
      params: input.params ?? {},
      runnerHostId: input.runnerHostId ?? null,
      createdAt: now,
    })
    .returning();
  if (!row) {
    throw new Error("insert into jobs returned no row");
  }
  return row;
}

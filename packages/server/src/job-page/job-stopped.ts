/**
 * @module job-page/job-stopped
 * What a stopped job (cancelled, failed, lost, refused) says about its end: who stopped it, when,
 * and how far it had got by the last progress it reported. A stopped job's bar never claims
 * 100 %: the page must not read as if the work was done.
 */
import { auditLog, type Database, type Job, users } from "@fleetback/db";
import { and, desc, eq } from "drizzle-orm";
import { CANCELLED_BEFORE_START } from "../jobs/cancel-job.js";
import type { JobProgressView } from "./job-view.js";

export interface JobStoppedView {
  /** "Cancelled", "Failed", "Lost" or "Refused". */
  verb: string;
  /** A user's name, "the agent" or "the server". */
  by: string;
  at: Date | null;
  /**
   * "57 of 184 files", "57 files", "reading all 184 files, before restic had written…" when it
   * stopped while writing what it had read, or undefined when nothing was reported.
   */
  after: string | undefined;
}

async function cancelledBy(db: Database, job: Job): Promise<string | undefined> {
  const [entry] = await db
    .select({ kind: auditLog.actorKind, username: users.username })
    .from(auditLog)
    .leftJoin(users, eq(users.id, auditLog.actorUserId))
    .where(and(eq(auditLog.action, "job.cancel"), eq(auditLog.targetId, job.id)))
    .orderBy(desc(auditLog.at))
    .limit(1);
  if (!entry) {
    return undefined;
  }
  if (entry.kind === "user") {
    return entry.username ?? "a deleted user";
  }
  return entry.kind === "system" ? "the server" : `an ${entry.kind}`;
}

function howFar(progress: JobProgressView | undefined): string | undefined {
  if (!progress || progress.filesDone === undefined) {
    return undefined;
  }
  if (progress.stoppedWriting) {
    const all = progress.filesTotal ?? progress.filesDone;
    return `reading all ${all} ${all === 1 ? "file" : "files"}, before restic had written the last of it to the repository`;
  }
  const files = progress.filesDone === 1 && progress.filesTotal === undefined ? "file" : "files";
  return progress.filesTotal === undefined
    ? `${progress.filesDone} ${files}`
    : `${progress.filesDone} of ${progress.filesTotal} files`;
}

export async function stoppedView(
  db: Database,
  job: Job,
  progress: JobProgressView | undefined,
  refused: boolean,
): Promise<JobStoppedView | undefined> {
  const after = howFar(progress);
  const at = job.finishedAt;
  if (refused) {
    return { verb: "Refused", by: "the agent", at, after };
  }
  switch (job.status) {
    case "cancelled": {
      const user = await cancelledBy(db, job);
      // No audited cancel: the agent stopped it itself (it was shutting down or its run time ran out).
      const by = user ?? (job.error === CANCELLED_BEFORE_START ? "the server" : "the agent");
      return { verb: "Cancelled", by, at, after };
    }
    case "failed":
      // The agent reports failures; a job that never got a report is "lost", which the server decides.
      return { verb: "Failed", by: "the agent", at, after };
    case "lost":
      return { verb: "Lost", by: "the server", at, after };
    default:
      return undefined;
  }
}

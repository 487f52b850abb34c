/**
 * @module job-page/job-view
 * What the job page shows from stored state: the job, its host, who started it, its progress
 * (as stored at most once a second) and the tail of its log. The live stream continues from here.
 */
import { type Database, type Host, hosts, type Job, jobLogs, sourceGroups, users } from "@fleetback/db";
import { and, count, desc, eq, like } from "drizzle-orm";
import { getJob } from "../jobs/job-queries.js";
import { RETRY_LIKE, type RenderedLogLine, renderLogLine } from "./log-render.js";
import { type SummaryRow, summaryRows } from "./summary-render.js";

export const LOG_TAIL_LINES = 200;

export interface JobProgressView {
  percent: number;
  filesDone: number | undefined;
  filesTotal: number | undefined;
  bytesDone: number | undefined;
  bytesTotal: number | undefined;
  etaSeconds: number | undefined;
  currentFile: string | undefined;
  /**
   * restic says 100 % while the job still runs: it has read everything, and is still writing the
   * last packs and the index to the repository, slowly under an upload cap. The page says so
   * instead of "100 %, time left –".
   */
  finishing: boolean;
  /**
   * The job stopped (cancelled, failed, lost) after restic had read everything, while it was still
   * writing to the repository: restic's 100 % counts what it read, so the page shows no full bar
   * for work that was not kept.
   */
  stoppedWriting: boolean;
}

export interface JobRetries {
  /** restic's backend retry lines in the whole stored log. */
  count: number;
  /** The newest of them, rendered. */
  last: string;
}

export interface JobView {
  job: Job;
  host: Pick<Host, "id" | "name" | "bandwidthUpKbps">;
  actor: string;
  groupName: string | undefined;
  active: boolean;
  progress: JobProgressView | undefined;
  summary: SummaryRow[];
  /** The summary as stored, pretty-printed for the "raw JSON" toggle; undefined when there is none. */
  summaryJson: string | undefined;
  logTail: Array<{ seq: number; stream: string; line: string; ts: Date } & RenderedLogLine>;
  /** Lines the agent logged after the job's result (log_end_seq), shown apart. */
  logAfter: JobView["logTail"];
  retries: JobRetries | undefined;
  lastSeq: number;
  durationSeconds: number | undefined;
  /**
   * The upload cap a backup runs under, KiB/s: its own (the group's or the run's) or else the
   * host's, as the agent applies them. Once restic has read everything it reports nothing more
   * until the end, so under a cap this bound is the only true thing to say about its rate.
   */
  uploadCapKibps: number | undefined;
}

const STOPPED_STATUSES = new Set(["cancelled", "failed", "lost"]);

const num = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);

/**
 * Progress is stored at most once a second, so a job that succeeded may have its last stored
 * value below 100 %; the page says what the live stream said at the end: done. restic 0.14 sends
 * status lines only now and then (often one, at the start), so a succeeded backup's counts come
 * from its summary, which every version prints, not from that stale line. A stopped job keeps
 * the figures it last reported: how far it got, never 100 % it did not reach.
 */
export function progressView(
  progress: Record<string, unknown> | null,
  status: string = "running",
  summary: Record<string, unknown> | null = null,
): JobProgressView | undefined {
  if (!progress) {
    // A short backup may end before restic printed any status line (0.18 often prints none):
    // its summary still says how much it did.
    const summarised = status === "succeeded" && num(summary?.total_files_processed) !== undefined;
    return summarised ? progressView({ percent_done: 1 }, status, summary) : undefined;
  }
  const currentFile = progress.current_file;
  const percent = Math.min(100, Math.max(0, Math.round((num(progress.percent_done) ?? 0) * 1000) / 10));
  const succeeded = status === "succeeded";
  const bytesDone = num(progress.bytes_done);
  const bytesTotal = num(progress.bytes_total);
  // Only once every byte is read: restic's percent alone can round up to 100 before that.
  const readAll = percent >= 100 && (bytesTotal === undefined || (bytesDone ?? 0) >= bytesTotal);
  const view: JobProgressView = {
    percent: succeeded ? 100 : percent,
    finishing: status === "running" && readAll,
    stoppedWriting: readAll && STOPPED_STATUSES.has(status),
    filesDone: num(progress.files_done),
    filesTotal: num(progress.files_total),
    bytesDone,
    bytesTotal,
    etaSeconds: succeeded ? undefined : num(progress.eta_seconds),
    currentFile: typeof currentFile === "string" && !succeeded ? currentFile : undefined,
  };
  const files = num(summary?.total_files_processed);
  const bytes = num(summary?.total_bytes_processed);
  if (succeeded && files !== undefined) {
    view.filesDone = files;
    view.filesTotal = files;
  }
  if (succeeded && bytes !== undefined) {
    view.bytesDone = bytes;
    view.bytesTotal = bytes;
  }
  return view;
}

async function loadRetries(db: Database, jobId: string): Promise<JobRetries | undefined> {
  const matches = and(eq(jobLogs.jobId, jobId), like(jobLogs.line, RETRY_LIKE));
  const [counted] = await db.select({ n: count() }).from(jobLogs).where(matches);
  const n = Number(counted?.n ?? 0);
  if (n === 0) {
    return undefined;
  }
  const [last] = await db
    .select({ line: jobLogs.line })
    .from(jobLogs)
    .where(matches)
    .orderBy(desc(jobLogs.seq))
    .limit(1);
  return { count: n, last: renderLogLine(last?.line ?? "").text };
}

export async function loadJobView(db: Database, jobId: string): Promise<JobView> {
  const job = await getJob(db, jobId);
  const [host] = await db
    .select({ id: hosts.id, name: hosts.name, bandwidthUpKbps: hosts.bandwidthUpKbps })
    .from(hosts)
    .where(eq(hosts.id, job.hostId));
  let actor: string = job.actorKind;
  if (job.actorKind === "user" && job.actorUserId) {
    const [user] = await db
      .select({ username: users.username })
      .from(users)
      .where(eq(users.id, job.actorUserId));
    actor = user ? user.username : "deleted user";
  }
  let groupName: string | undefined;
  if (job.sourceGroupId) {
    const [group] = await db
      .select({ name: sourceGroups.name })
      .from(sourceGroups)
      .where(eq(sourceGroups.id, job.sourceGroupId));
    groupName = group?.name;
  }
  const tail = await db
    .select({ seq: jobLogs.seq, stream: jobLogs.stream, line: jobLogs.line, ts: jobLogs.ts })
    .from(jobLogs)
    .where(eq(jobLogs.jobId, job.id))
    .orderBy(desc(jobLogs.seq))
    .limit(LOG_TAIL_LINES);
  tail.reverse();
  const rendered = tail.map((line) => ({ ...line, ...renderLogLine(line.line) }));
  const afterEnd = (seq: number) => job.logEndSeq !== null && seq > job.logEndSeq;
  return {
    job,
    host: host ?? { id: job.hostId, name: job.hostId, bandwidthUpKbps: null },
    actor,
    groupName,
    active: job.status === "queued" || job.status === "running",
    progress: progressView(job.progress, job.status, job.summary),
    summary: summaryRows(job.summary),
    summaryJson:
      job.summary && Object.keys(job.summary).length > 0 ? JSON.stringify(job.summary, null, 2) : undefined,
    logTail: rendered.filter((line) => !afterEnd(line.seq)),
    logAfter: rendered.filter((line) => afterEnd(line.seq)),
    retries: await loadRetries(db, job.id),
    lastSeq: tail.at(-1)?.seq ?? 0,
    uploadCapKibps:
      job.kind === "backup"
        ? (num(job.params.bandwidth_up_kbps) ?? host?.bandwidthUpKbps ?? undefined)
        : undefined,
    durationSeconds:
      job.startedAt && job.finishedAt
        ? Math.max(0, (job.finishedAt.getTime() - job.startedAt.getTime()) / 1000)
        : undefined,
  };
}

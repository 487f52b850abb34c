/**
 * @module mirror/mirror-state
 * What the host page and GET /api/hosts/{id} say of the host's mirror: where it is (URL without
 * credentials), the last copy (when, outcome, error), and what the mirror held after the last good
 * one: its snapshot count, its newest snapshot and how far it lags the repository. It is read from
 * the copy jobs themselves, as the last drill is: the job rows hold the agent's summaries, so no
 * second record can disagree. A summary that does not match CopySummary is not shown.
 */
import { type Database, type JobStatus, jobs, snapshots } from "@fleetback/db";
import { CopySummary } from "@fleetback/protocol";
import { and, count, desc, eq, gt, inArray, max } from "drizzle-orm";
import { Value } from "typebox/value";
import type { SlotView } from "../hosts/slot-view.js";
import { speaksMirror } from "./mirror-copy.js";

/** The mirror slot as host-detail shows every slot: bound or not, URL and user, never a password. */
export type MirrorSlotView = SlotView;

const ENDED: JobStatus[] = ["succeeded", "failed", "cancelled", "lost"];

export interface MirrorState {
  slot: MirrorSlotView;
  agentSupported: boolean;
  lastCopy: { jobId: string; status: JobStatus; finishedAt: Date | null; error: string | null } | undefined;
  lastGood: { jobId: string; finishedAt: Date | null; summary: CopySummary } | undefined;
  /** The repository's newest snapshot of this host (the snapshot cache). */
  newestSnapshotAt: Date | null;
  /** Cached snapshots newer than the mirror's newest: what the next copy has to bring over. */
  snapshotsBehind: number | null;
}

async function newestCopy(db: Database, hostId: string, statuses: JobStatus[]) {
  const [job] = await db
    .select()
    .from(jobs)
    .where(and(eq(jobs.hostId, hostId), eq(jobs.kind, "copy"), inArray(jobs.status, statuses)))
    .orderBy(desc(jobs.id))
    .limit(1);
  return job;
}

export async function mirrorStateOf(
  db: Database,
  hostId: string,
  slot: MirrorSlotView,
  protocolVersion: number | null,
): Promise<MirrorState> {
  const last = await newestCopy(db, hostId, ENDED);
  const good = last?.status === "succeeded" ? last : await newestCopy(db, hostId, ["succeeded"]);
  const summary = good && Value.Check(CopySummary, good.summary) ? (good.summary as CopySummary) : undefined;
  const [newest] = await db
    .select({ at: max(snapshots.time) })
    .from(snapshots)
    .where(and(eq(snapshots.hostId, hostId), eq(snapshots.isOwn, true)));
  let snapshotsBehind: number | null = null;
  if (summary) {
    const latest = summary.mirror_latest_time === null ? undefined : new Date(summary.mirror_latest_time);
    const [behind] = await db
      .select({ n: count() })
      .from(snapshots)
      .where(
        latest
          ? and(eq(snapshots.hostId, hostId), eq(snapshots.isOwn, true), gt(snapshots.time, latest))
          : and(eq(snapshots.hostId, hostId), eq(snapshots.isOwn, true)),
      );
    snapshotsBehind = behind?.n ?? 0;
  }
  return {
    slot,
    agentSupported: speaksMirror(protocolVersion),
    lastCopy: last && { jobId: last.id, status: last.status, finishedAt: last.finishedAt, error: last.error },
    lastGood: good && summary ? { jobId: good.id, finishedAt: good.finishedAt, summary } : undefined,
    newestSnapshotAt: newest?.at ?? null,
    snapshotsBehind,
  };
}

export function mirrorJson(state: MirrorState) {
  const summary = state.lastGood?.summary;
  const latest = summary?.mirror_latest_time ?? null;
  const lagSeconds =
    summary === undefined || state.newestSnapshotAt === null
      ? null
      : latest === null
        ? null
        : Math.max(0, Math.round((state.newestSnapshotAt.getTime() - new Date(latest).getTime()) / 1000));
  return {
    configured: state.slot.state !== "absent",
    repository: state.slot,
    agent_supported: state.agentSupported,
    last_copy:
      state.lastCopy === undefined
        ? null
        : {
            job_id: state.lastCopy.jobId,
            status: state.lastCopy.status,
            finished_at: state.lastCopy.finishedAt?.toISOString() ?? null,
            error: state.lastCopy.error,
          },
    last_good_copy_at: state.lastGood?.finishedAt?.toISOString() ?? null,
    snapshot_count: summary?.mirror_snapshot_count ?? null,
    latest_snapshot_at: latest,
    snapshots_behind: state.snapshotsBehind,
    lag_seconds: lagSeconds,
  };
}

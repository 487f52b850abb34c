/**
 * @module jobs/snapshots-report
 * `restic snapshots --json` (CONTRACT §6: one JSON array, `[]` for an empty repository) as the
 * `snapshots.report` projection: most recent first, times in UTC, size and file count from the
 * snapshot's `summary` block, which only restic >= 0.17 writes (0 otherwise). A report must fit
 * one frame (MAX_FRAME_BYTES); a longer list keeps the most recent snapshots that fit.
 */
import {
  MAX_FRAME_BYTES,
  SNAPSHOT_ID_PATTERN,
  type Snapshot,
  type SnapshotsReport,
} from "@fleetback/protocol";
import { count, isObject } from "./backup-output.js";

const SNAPSHOT_ID = new RegExp(SNAPSHOT_ID_PATTERN);

export type ParsedSnapshots = { ok: true; snapshots: Snapshot[] } | { ok: false; reason: string };

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

function snapshotOf(record: unknown): Snapshot | undefined {
  if (!isObject(record)) {
    return undefined;
  }
  const { id, short_id: shortId, time } = record;
  if (typeof id !== "string" || !SNAPSHOT_ID.test(id) || typeof time !== "string") {
    return undefined;
  }
  const millis = Date.parse(time);
  if (Number.isNaN(millis)) {
    return undefined;
  }
  const summary = isObject(record.summary) ? record.summary : {};
  return {
    id,
    short_id: typeof shortId === "string" && SNAPSHOT_ID.test(shortId) ? shortId : id.slice(0, 8),
    // restic prints the local offset of the host that made the snapshot; the wire wants UTC.
    time: new Date(millis).toISOString(),
    hostname: typeof record.hostname === "string" ? record.hostname : "",
    paths: strings(record.paths),
    tags: strings(record.tags),
    size_bytes: count(summary.total_bytes_processed) ?? 0,
    file_count: count(summary.total_files_processed) ?? 0,
  };
}

/** Parses the whole stdout of `snapshots --json`; the result is most recent first. */
export function parseSnapshots(stdout: string): ParsedSnapshots {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return { ok: false, reason: "restic snapshots printed no valid JSON" };
  }
  if (!Array.isArray(parsed)) {
    return { ok: false, reason: "restic snapshots printed no JSON array" };
  }
  const snapshots: Snapshot[] = [];
  for (const raw of parsed) {
    const snapshot = snapshotOf(raw);
    if (snapshot === undefined) {
      return { ok: false, reason: "restic snapshots printed an entry without id or time" };
    }
    snapshots.push(snapshot);
  }
  // Stable sort: equal times keep restic's order, reversed below to put the newest first.
  snapshots.reverse();
  snapshots.sort((a, b) => Date.parse(b.time) - Date.parse(a.time));
  return { ok: true, snapshots };
}

/** The frame's bytes without any snapshot: envelope, type, refreshed_at, `[]`. */
function baseFrameBytes(refreshedAt: string): number {
  const payload: SnapshotsReport = { refreshed_at: refreshedAt, snapshots: [] };
  return Buffer.byteLength(JSON.stringify({ id: "0".repeat(26), type: "snapshots.report", payload }), "utf8");
}

/** The most recent snapshots whose report fits one frame, and how many were left out. */
export function fitToFrame(
  snapshots: Snapshot[],
  refreshedAt: string,
  maxBytes = MAX_FRAME_BYTES,
): { report: SnapshotsReport; omitted: number } {
  let size = baseFrameBytes(refreshedAt);
  let kept = 0;
  for (const snapshot of snapshots) {
    const next = size + Buffer.byteLength(JSON.stringify(snapshot), "utf8") + (kept > 0 ? 1 : 0);
    if (next > maxBytes) {
      break;
    }
    size = next;
    kept += 1;
  }
  return {
    report: { snapshots: snapshots.slice(0, kept), refreshed_at: refreshedAt },
    omitted: snapshots.length - kept,
  };
}

/**
 * @module restic/snapshots-report
 * `restic snapshots --json` (one JSON array, `[]` for an empty repository: testdata/restic
 * `snapshots-empty-repo`) as the
 * `snapshots.report` projection: most recent first, times in UTC, size and file count from the
 * snapshot's `summary` block, which only restic >= 0.17 writes (0 otherwise). A list too long for
 * one frame goes out in parts (protocol 2) of at most REPORT_PART_BYTES each, so a host with
 * thousands of snapshots is still reported in full.
 */
import {
  MAX_FRAME_BYTES,
  newMessageId,
  SNAPSHOT_ID_PATTERN,
  SNAPSHOTS_REPORT_MAX_PARTS,
  type Snapshot,
  type SnapshotsReport,
  type SnapshotsReportPart,
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

/**
 * Bytes of one part's frame, envelope included: half the frame cap, so every frame stays well under
 * MAX_FRAME_BYTES whatever the peer counts as overhead.
 */
export const REPORT_PART_BYTES = 512 * 1024;

/** The frame's bytes without any snapshot, part fields at their longest: envelope, type, `[]`. */
function baseFrameBytes(refreshedAt: string): number {
  const payload: SnapshotsReportPart = {
    snapshots: [],
    refreshed_at: refreshedAt,
    report_id: "0".repeat(26),
    part: SNAPSHOTS_REPORT_MAX_PARTS - 1,
    parts: SNAPSHOTS_REPORT_MAX_PARTS,
  };
  return Buffer.byteLength(JSON.stringify({ id: "0".repeat(26), type: "snapshots.report", payload }), "utf8");
}

export interface SplitReport {
  /** One whole report when the list fits one part; otherwise the parts, most recent first. */
  reports: SnapshotsReport[];
  /** Snapshots left out: the oldest beyond SNAPSHOTS_REPORT_MAX_PARTS parts, or one too big for a frame. */
  omitted: number;
}

export interface SplitOptions {
  /** Default REPORT_PART_BYTES. */
  maxPartBytes?: number;
  /** Ids the parts of one report share; default a new message id. */
  newReportId?: () => string;
}

/** Cuts the list, in its order, into runs whose frames stay within `maxPartBytes`. */
function chunksOf(snapshots: Snapshot[], base: number, maxPartBytes: number) {
  const chunks: Snapshot[][] = [];
  let omitted = 0;
  let chunk: Snapshot[] = [];
  let size = base;
  for (const snapshot of snapshots) {
    const bytes = Buffer.byteLength(JSON.stringify(snapshot), "utf8");
    if (chunk.length > 0 && size + 1 + bytes > maxPartBytes) {
      chunks.push(chunk);
      chunk = [];
      size = base;
    }
    if (chunk.length === 0 && base + bytes > MAX_FRAME_BYTES) {
      // Megabytes of paths in one snapshot: no frame can carry it.
      omitted += 1;
      continue;
    }
    size += (chunk.length > 0 ? 1 : 0) + bytes;
    chunk.push(snapshot);
  }
  if (chunk.length > 0) {
    chunks.push(chunk);
  }
  return { chunks, omitted };
}

/**
 * The `snapshots.report` frames for a list, most recent first: a whole report when it fits one
 * part (exactly what protocol 1 sent), otherwise parts sharing one `report_id`. A list longer than
 * SNAPSHOTS_REPORT_MAX_PARTS parts keeps the most recent snapshots.
 */
export function splitReport(
  snapshots: Snapshot[],
  refreshedAt: string,
  options: SplitOptions = {},
): SplitReport {
  const maxPartBytes = Math.min(options.maxPartBytes ?? REPORT_PART_BYTES, MAX_FRAME_BYTES);
  const split = chunksOf(snapshots, baseFrameBytes(refreshedAt), maxPartBytes);
  const chunks = split.chunks.slice(0, SNAPSHOTS_REPORT_MAX_PARTS);
  const dropped = split.chunks.slice(SNAPSHOTS_REPORT_MAX_PARTS).reduce((sum, c) => sum + c.length, 0);
  const omitted = split.omitted + dropped;
  if (chunks.length <= 1) {
    return { reports: [{ snapshots: chunks[0] ?? [], refreshed_at: refreshedAt }], omitted };
  }
  const reportId = (options.newReportId ?? newMessageId)();
  const reports = chunks.map(
    (chunk, part): SnapshotsReportPart => ({
      snapshots: chunk,
      refreshed_at: refreshedAt,
      report_id: reportId,
      part,
      parts: chunks.length,
    }),
  );
  return { reports, omitted };
}

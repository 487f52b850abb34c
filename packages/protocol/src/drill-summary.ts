/**
 * @module drill-summary
 * What a restore drill's `job.finished.summary` holds (since protocol 6). `summary` stays free-form
 * on the wire, so this schema is not part of the frame check: the server reads a drill's summary
 * through it and shows nothing it cannot vouch for, and the agent builds its summary as this type.
 */
import { type Static, Type } from "typebox";
import { Count, NonEmptyString, SnapshotId } from "./common.js";

/** Mismatches listed in a summary; more are counted in `mismatch_count` only. */
export const DRILL_MISMATCHES_LISTED = 20;

export const DrillMismatch = Type.Object({
  path: NonEmptyString,
  /** The size `restic ls` records for the file. */
  expected_size: Count,
  /** What the restore wrote; null when the file is missing from the scratch directory. */
  restored_size: Type.Union([Count, Type.Null()]),
});
export type DrillMismatch = Static<typeof DrillMismatch>;

export const DrillSummary = Type.Object({
  snapshot_id: SnapshotId,
  /** Regular files the snapshot lists: the population the sample was drawn from. */
  files_in_snapshot: Count,
  /** Files restored, verified by restic and compared by size. */
  files_checked: Count,
  bytes_checked: Count,
  mismatch_count: Count,
  mismatches: Type.Array(DrillMismatch, { maxItems: DRILL_MISMATCHES_LISTED }),
});
export type DrillSummary = Static<typeof DrillSummary>;

/**
 * @module copy-summary
 * What a `copy` job's `job.finished.summary` holds (since protocol 8): the agent copies the named
 * snapshots to the mirror, then lists the mirror, and says what the mirror now holds. `summary`
 * stays free-form on the wire, so this schema is not part of the frame check: the server reads a
 * copy's summary through it, and the agent builds its summary as this type.
 */
import { type Static, Type } from "typebox";
import { Count, Rfc3339, SnapshotId } from "./common.js";
import { COPY_SNAPSHOTS_MAX } from "./constants.js";

export const CopySummary = Type.Object({
  /** True when this job created the mirror (`restic init --copy-chunker-params`). */
  initialised: Type.Boolean(),
  /** Snapshots the job was asked to copy. */
  requested: Count,
  /** Of those, the ones the mirror holds a copy of afterwards (copied now or before). */
  mirrored: Count,
  /** Requested snapshots without a copy in the mirror afterwards (full ids). */
  missing: Type.Array(SnapshotId, { maxItems: COPY_SNAPSHOTS_MAX }),
  /** Every snapshot in the mirror, of any host. */
  mirror_snapshot_count: Count,
  /** The newest snapshot time in the mirror (a copy keeps its original's time); null when empty. */
  mirror_latest_time: Type.Union([Rfc3339, Type.Null()]),
});
export type CopySummary = Static<typeof CopySummary>;

/**
 * @module file-catalog
 * The fleet's file catalogue (since protocol 15, issue 38). After a backup the agent compares the
 * new snapshot's files with the last snapshot of the same source group it catalogued (its _base_)
 * and sends only what changed, in `catalog.delta` parts; or, with no base, every file. The server
 * keeps one row per distinct version of a path (closed when a later snapshot no longer holds it),
 * so a host's catalogue grows with its distinct file versions, not with snapshots × files. The
 * server answers the last part (or a part it cannot take) with one `catalog.ack`: `applied`, after
 * which the agent's base is the new snapshot; `resend_full` when the server's base is not the
 * agent's (a lost ack, a restored server), after which the agent sends every file from part 0;
 * `refused` with a reason, after which the agent keeps its old base.
 */
import { type Static, Type } from "typebox";
import { Count, Rfc3339, SnapshotId, TreeEntryType } from "./common.js";
import {
  CATALOG_ACK_STATUSES,
  CATALOG_DELTA_MAX_PARTS,
  CATALOG_PART_ENTRIES_MAX,
  CATALOG_PATH_MAX_LENGTH,
  CATALOG_TAG_MAX_LENGTH,
} from "./constants.js";
import { SNAPSHOT_PATH_PATTERN } from "./formats.js";

export const CatalogPath = Type.String({
  pattern: SNAPSHOT_PATH_PATTERN,
  maxLength: CATALOG_PATH_MAX_LENGTH,
  description: "absolute path",
});
export type CatalogPath = Static<typeof CatalogPath>;

export const CatalogTag = Type.String({ minLength: 1, maxLength: CATALOG_TAG_MAX_LENGTH });
export type CatalogTag = Static<typeof CatalogTag>;

/** One path of the snapshot as the new snapshot holds it. */
export const CatalogEntry = Type.Object({
  path: CatalogPath,
  type: TreeEntryType,
  size: Count,
  mtime: Rfc3339,
});
export type CatalogEntry = Static<typeof CatalogEntry>;

/** Agent -> server: one part of what changed between `base_snapshot_id` and `snapshot_id`. */
export const CatalogDelta = Type.Object({
  snapshot_id: SnapshotId,
  /** The source group the snapshot was made for (its tag). */
  tag: CatalogTag,
  time: Rfc3339,
  /** null: no base, `changed` lists every path of the snapshot. */
  base_snapshot_id: Type.Union([SnapshotId, Type.Null()]),
  part: Type.Integer({ minimum: 0, maximum: CATALOG_DELTA_MAX_PARTS - 1 }),
  parts: Type.Integer({ minimum: 1, maximum: CATALOG_DELTA_MAX_PARTS }),
  changed: Type.Array(CatalogEntry, { maxItems: CATALOG_PART_ENTRIES_MAX }),
  removed: Type.Array(CatalogPath, { maxItems: CATALOG_PART_ENTRIES_MAX }),
});
export type CatalogDelta = Static<typeof CatalogDelta>;

export const CatalogAckStatus = Type.Enum(CATALOG_ACK_STATUSES);
export type CatalogAckStatus = Static<typeof CatalogAckStatus>;

/** Server -> agent: what became of the delta for `snapshot_id` of `tag`. */
export const CatalogAck = Type.Object({
  snapshot_id: SnapshotId,
  tag: CatalogTag,
  status: CatalogAckStatus,
  error: Type.Optional(Type.String()),
});
export type CatalogAck = Static<typeof CatalogAck>;

/**
 * @module dump
 * Downloads from a snapshot (since protocol 7, issue 17): the server asks the agent to stream one
 * file, or one folder as an archive, with `restic dump`; the agent sends the output in numbered
 * `dump.chunk` frames and ends with one `dump.end`. Every frame of a download carries the
 * `request_id` the server chose. The agent keeps at most DUMP_WINDOW_CHUNKS chunks ahead of the
 * server's `dump.ack`, so a slow browser slows restic down instead of filling memory; it stops
 * restic on `dump.cancel` and when the output passes `max_bytes`.
 */
import { type Static, Type } from "typebox";
import { Count, SnapshotId, SnapshotPath, Ulid } from "./common.js";
import { DUMP_ARCHIVE_FORMATS, DUMP_CHUNK_MAX_BYTES, DUMP_END_STATUSES } from "./constants.js";
import { BASE64_PATTERN } from "./formats.js";

export const DumpArchiveFormat = Type.Enum(DUMP_ARCHIVE_FORMATS);
export type DumpArchiveFormat = Static<typeof DumpArchiveFormat>;

export const DumpEndStatus = Type.Enum(DUMP_END_STATUSES);
export type DumpEndStatus = Static<typeof DumpEndStatus>;

/** Server -> agent: stream `path` of `snapshot_id`. A folder comes as an archive (tar if omitted). */
export const DumpRequest = Type.Object({
  request_id: Ulid,
  snapshot_id: SnapshotId,
  path: SnapshotPath,
  archive: Type.Optional(DumpArchiveFormat),
  max_bytes: Type.Integer({ minimum: 1 }),
});
export type DumpRequest = Static<typeof DumpRequest>;

/** Server -> agent: chunk `seq` has been passed on; the agent may send DUMP_WINDOW_CHUNKS past it. */
export const DumpAck = Type.Object({ request_id: Ulid, seq: Count });
export type DumpAck = Static<typeof DumpAck>;

/** Server -> agent: the browser went away; stop restic and answer `dump.end` `cancelled`. */
export const DumpCancel = Type.Object({ request_id: Ulid });
export type DumpCancel = Static<typeof DumpCancel>;

/** Largest `dump.chunk.data`: the base64 length of DUMP_CHUNK_MAX_BYTES. */
export const DUMP_CHUNK_MAX_BASE64 = Math.ceil(DUMP_CHUNK_MAX_BYTES / 3) * 4;

/** Agent -> server: the next piece of restic's output, numbered from 0 without gaps. */
export const DumpChunk = Type.Object({
  request_id: Ulid,
  seq: Count,
  data: Type.String({ minLength: 4, maxLength: DUMP_CHUNK_MAX_BASE64, pattern: BASE64_PATTERN }),
});
export type DumpChunk = Static<typeof DumpChunk>;

/**
 * Agent -> server: how the download ended, after its last chunk. `bytes` counts what the chunks
 * carried; only `succeeded` means the output is whole.
 */
export const DumpEnd = Type.Object({
  request_id: Ulid,
  status: DumpEndStatus,
  bytes: Count,
  error: Type.Optional(Type.String()),
});
export type DumpEnd = Static<typeof DumpEnd>;

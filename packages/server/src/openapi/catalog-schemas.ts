/**
 * @module openapi/catalog-schemas
 * The fleet search's answers (catalog/catalog-search.ts, catalog/file-history.ts as JSON).
 */
import { Type } from "typebox";
import { DateTime, Id } from "./common-schemas.js";

const SnapshotRefJson = Type.Object({ id: Type.String(), time: DateTime });

const VersionFields = {
  host_id: Id,
  host_name: Type.String(),
  group: Type.String({ description: "the source group (snapshot tag) whose snapshots hold it" }),
  path: Type.String(),
  type: Type.Union([
    Type.Literal("dir"),
    Type.Literal("file"),
    Type.Literal("symlink"),
    Type.Literal("other"),
  ]),
  size: Type.Integer({ minimum: 0 }),
  mtime: DateTime,
  snapshot_count: Type.Integer({ minimum: 1, description: "snapshots that hold this version" }),
  first_snapshot: SnapshotRefJson,
  last_snapshot: SnapshotRefJson,
  current: Type.Boolean({ description: "the group's newest catalogued snapshot still holds it" }),
};

export const FileSearchAnswer = Type.Object(
  {
    hits: Type.Array(Type.Object(VersionFields), {
      description: "one per version: identical versions in many snapshots are one hit",
    }),
    more: Type.Boolean({ description: "more hits follow: ask again with offset + the hits' count" }),
    not_catalogued: Type.Array(Type.Object({ id: Id, name: Type.String() }), {
      description: "hosts (of the filters) that have sent no catalogue yet, and so were not searched",
    }),
  },
  { $id: "FileSearch" },
);

export const FileVersionsAnswer = Type.Object(
  {
    host_id: Id,
    path: Type.String(),
    versions: Type.Array(
      Type.Object({
        ...VersionFields,
        snapshots: Type.Array(SnapshotRefJson, { description: "newest first, at most 50" }),
      }),
      { description: "newest first" },
    ),
  },
  { $id: "FileVersions" },
);

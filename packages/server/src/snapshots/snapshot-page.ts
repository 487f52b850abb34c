/**
 * @module snapshots/snapshot-page
 * One page of a host's cached snapshot list, newest first, paged by a time+id cursor: the query
 * string and the paging both the snapshots page and GET /api/hosts/{id}/snapshots answer with, so
 * a `next_before` from one is a valid `before` for the other. `tag` keeps the snapshots carrying
 * that tag; `group` those of one of the host's source groups (whose name is the snapshots' tag).
 */
import { type Database, sourceGroups } from "@fleetback/db";
import { asc, eq } from "drizzle-orm";
import { Type } from "typebox";
import { RequestError } from "../errors.js";
import { requireHost } from "../hosts/require-host.js";
import { decodeCursor, encodeCursor, listSnapshots, type SnapshotCursor } from "./snapshot-store.js";

export const SNAPSHOT_PAGE_DEFAULT = 50;
export const SNAPSHOT_PAGE_MAX = 500;

export const SnapshotsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 999 })),
    before: Type.Optional(Type.String({ minLength: 3, maxLength: 200 })),
    /** Empty means no filter (the filter form's "any" choice). */
    tag: Type.Optional(Type.String({ maxLength: 200 })),
    group: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export interface SnapshotsQueryValue {
  limit?: number | undefined;
  before?: string | undefined;
  tag?: string | undefined;
  group?: string | undefined;
}

function pageQuery(query: SnapshotsQueryValue) {
  const limit = Math.min(Number(query.limit ?? SNAPSHOT_PAGE_DEFAULT), SNAPSHOT_PAGE_MAX);
  let before: SnapshotCursor | undefined;
  if (query.before !== undefined) {
    before = decodeCursor(query.before);
    if (!before) {
      throw new RequestError("invalid", "before: must be a cursor from a previous page's next_before");
    }
  }
  return { limit, before };
}

/** The names of the host's source groups, sorted. */
export async function sourceGroupNames(db: Database, hostId: string): Promise<string[]> {
  const rows = await db
    .select({ name: sourceGroups.name })
    .from(sourceGroups)
    .where(eq(sourceGroups.hostId, hostId))
    .orderBy(asc(sourceGroups.name));
  return rows.map((row) => row.name);
}

/**
 * The host (404 if unknown) and one page of its snapshots, with the cursor of the next page and
 * the filter applied (empty strings are no filter; an unknown group is a 400 naming the field).
 */
export async function snapshotPage(db: Database, hostId: string, query: SnapshotsQueryValue) {
  const host = await requireHost(db, hostId);
  const { limit, before } = pageQuery(query);
  const tag = query.tag?.trim() || undefined;
  const group = query.group?.trim() || undefined;
  const groups = await sourceGroupNames(db, host.id);
  if (group !== undefined && !groups.includes(group)) {
    throw new RequestError("invalid", `group: ${group} is not a source group of this host`);
  }
  const tags = [tag, group].filter((value): value is string => value !== undefined);
  const found = await listSnapshots(db, host.id, { limit, before, tags });
  const last = found.at(-1);
  return {
    host,
    found,
    limit,
    groups,
    filter: { tag, group },
    nextBefore: found.length === limit && last ? encodeCursor(last) : undefined,
  };
}

/**
 * @module snapshots/snapshot-page
 * One page of a host's cached snapshot list, newest first, paged by a time+id cursor: the query
 * string and the paging both the snapshots page and GET /api/hosts/{id}/snapshots answer with, so
 * a `next_before` from one is a valid `before` for the other.
 */
import type { Database } from "@fleetback/db";
import { Type } from "typebox";
import { RequestError } from "../errors.js";
import { requireHost } from "../hosts/require-host.js";
import { decodeCursor, encodeCursor, listSnapshots, type SnapshotCursor } from "./snapshot-store.js";

export const SNAPSHOT_PAGE_DEFAULT = 50;
export const SNAPSHOT_PAGE_MAX = 500;

export const SnapshotsQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,2}$" })),
    before: Type.Optional(Type.String({ minLength: 3, maxLength: 200 })),
  },
  { additionalProperties: false },
);

function pageQuery(query: { limit?: string | undefined; before?: string | undefined }) {
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

/** The host (404 if unknown) and one page of its snapshots, with the cursor of the next page. */
export async function snapshotPage(
  db: Database,
  hostId: string,
  query: { limit?: string | undefined; before?: string | undefined },
) {
  const host = await requireHost(db, hostId);
  const { limit, before } = pageQuery(query);
  const found = await listSnapshots(db, host.id, { limit, before });
  const last = found.at(-1);
  return {
    host,
    found,
    limit,
    nextBefore: found.length === limit && last ? encodeCursor(last) : undefined,
  };
}

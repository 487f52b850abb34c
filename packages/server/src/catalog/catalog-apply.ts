/**
 * @module catalog/catalog-apply
 * Applies one `catalog.delta` part in one transaction (issue 38.3), and says what to answer.
 *
 * A version row is closed (`until_at` = the new snapshot's time) when the new snapshot no longer
 * holds its path as it was, and a changed path gets a new open row; a path named as changed whose
 * type, size and mtime are those of the row just closed reopens that row instead, so a full resend
 * (no base) folds into the versions already there. Part 0 of a delta first undoes an unfinished
 * earlier attempt (rows that start or end at its time): the parts are applied as they arrive,
 * and a disconnect between them must not leave half a snapshot in the catalogue. The new base is
 * recorded with the last part only.
 *
 * Hostile input: a tag must be one of the host's source groups (a host cannot make lineages at
 * will), paths are bounded by the schema, duplicates within a part are collapsed, and every
 * statement is scoped to the host's own lineage.
 */
import { type Database, executeRows, sourceGroups, type Transaction } from "@fleetback/db";
import type { CatalogAck, CatalogDelta } from "@fleetback/protocol";
import { and, eq, sql } from "drizzle-orm";
import { dirKey, lineageKey, splitPath } from "./catalog-keys.js";

export type CatalogAnswer = Omit<CatalogAck, "snapshot_id" | "tag">;

interface LineageRow extends Record<string, unknown> {
  snapshot_id: string | null;
  snapshot_at: string | null;
  pending_snapshot_id: string | null;
  pending_at: string | null;
  pending_part: number | null;
}

interface PartRows {
  dirIds: string[];
  dirPaths: string[];
  changed: { dirs: string[]; names: string[]; types: string[]; sizes: string[]; mtimes: string[] };
  touched: { dirs: string[]; names: string[] };
}

/** The part's paths as keys, each path once (a later mention wins, a change over a removal). */
function rowsOf(delta: CatalogDelta): PartRows {
  const dirs = new Map<string, string>();
  const changed = new Map<string, { dir: string; name: string; type: string; size: number; mtime: string }>();
  const touched = new Map<string, { dir: string; name: string }>();
  const keyOf = (path: string) => {
    const split = splitPath(path);
    if (split === undefined) {
      return undefined;
    }
    const dir = dirKey(split.dir).toString();
    dirs.set(dir, split.dir);
    return { dir, name: split.name };
  };
  for (const path of delta.removed) {
    const key = keyOf(path);
    if (key !== undefined) {
      touched.set(path, key);
    }
  }
  for (const entry of delta.changed) {
    const key = keyOf(entry.path);
    if (key !== undefined) {
      touched.set(entry.path, key);
      changed.set(entry.path, { ...key, type: entry.type, size: entry.size, mtime: entry.mtime });
    }
  }
  const changedRows = [...changed.values()];
  const touchedRows = [...touched.values()];
  return {
    dirIds: [...dirs.keys()],
    dirPaths: [...dirs.values()],
    changed: {
      dirs: changedRows.map((row) => row.dir),
      names: changedRows.map((row) => row.name),
      types: changedRows.map((row) => row.type),
      sizes: changedRows.map((row) => String(row.size)),
      mtimes: changedRows.map((row) => row.mtime),
    },
    touched: { dirs: touchedRows.map((row) => row.dir), names: touchedRows.map((row) => row.name) },
  };
}

async function lockLineage(tx: Transaction, id: bigint, hostId: string, tag: string): Promise<LineageRow> {
  await tx.execute(
    sql`insert into catalog_lineages (id, host_id, tag) values (${id.toString()}::bigint, ${hostId}, ${tag})
        on conflict (id) do nothing`,
  );
  const [row] = await executeRows<LineageRow>(
    tx as unknown as Database,
    sql`select snapshot_id, to_char(snapshot_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as snapshot_at,
               pending_snapshot_id,
               to_char(pending_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as pending_at, pending_part
          from catalog_lineages where id = ${id.toString()}::bigint and host_id = ${hostId} for update`,
  );
  if (row === undefined) {
    throw new Error("catalogue lineage key belongs to another host");
  }
  return row;
}

async function undoPending(tx: Transaction, lineage: string, at: string): Promise<void> {
  await tx.execute(
    sql`delete from file_versions where lineage_id = ${lineage}::bigint and from_at = ${at}::timestamptz`,
  );
  await tx.execute(
    sql`update file_versions set until_at = null
         where lineage_id = ${lineage}::bigint and until_at = ${at}::timestamptz`,
  );
}

async function applyRows(tx: Transaction, lineage: string, at: string, rows: PartRows, full: boolean) {
  if (rows.dirIds.length > 0) {
    await tx.execute(
      sql`insert into catalog_dirs (lineage_id, id, path)
          select ${lineage}::bigint, d.id::bigint, d.path
            from unnest(${sql.param(rows.dirIds)}::text[], ${sql.param(rows.dirPaths)}::text[]) as d(id, path)
          on conflict (lineage_id, id) do nothing`,
    );
  }
  if (!full && rows.touched.dirs.length > 0) {
    await tx.execute(
      sql`update file_versions v set until_at = ${at}::timestamptz
            from unnest(${sql.param(rows.touched.dirs)}::text[], ${sql.param(rows.touched.names)}::text[]) as t(dir, name)
           where v.lineage_id = ${lineage}::bigint and v.dir_id = t.dir::bigint and v.name = t.name
             and v.until_at is null`,
    );
  }
  if (rows.changed.dirs.length === 0) {
    return;
  }
  const c = rows.changed;
  await tx.execute(
    sql`with input as (
          select i.dir::bigint as dir_id, i.name, i.type, i.size::bigint as size, i.mtime::timestamptz as mtime
            from unnest(${sql.param(c.dirs)}::text[], ${sql.param(c.names)}::text[], ${sql.param(c.types)}::text[],
                        ${sql.param(c.sizes)}::text[], ${sql.param(c.mtimes)}::text[]) as i(dir, name, type, size, mtime)
        ), reopened as (
          update file_versions v set until_at = null
            from input i
           where v.lineage_id = ${lineage}::bigint and v.dir_id = i.dir_id and v.name = i.name
             and v.until_at = ${at}::timestamptz
             and v.type = i.type and v.size = i.size and v.mtime = i.mtime
          returning v.dir_id, v.name
        )
        insert into file_versions (lineage_id, dir_id, name, type, size, mtime, from_at)
        select ${lineage}::bigint, i.dir_id, i.name, i.type, i.size, i.mtime, ${at}::timestamptz
          from input i
         where not exists (select 1 from reopened r where r.dir_id = i.dir_id and r.name = i.name)`,
  );
}

async function isSourceGroup(db: Database, hostId: string, tag: string): Promise<boolean> {
  const rows = await db
    .select({ id: sourceGroups.id })
    .from(sourceGroups)
    .where(and(eq(sourceGroups.hostId, hostId), eq(sourceGroups.name, tag)))
    .limit(1);
  return rows.length > 0;
}

/**
 * Applies `delta` (one part) to `hostId`'s catalogue. Answers with the last part, at the first part
 * it cannot take, and at once for a delta already applied; undefined while more parts are due.
 */
export async function applyCatalogPart(
  db: Database,
  hostId: string,
  delta: CatalogDelta,
): Promise<CatalogAnswer | undefined> {
  if (delta.part >= delta.parts) {
    return { status: "refused", error: `part ${delta.part} of ${delta.parts} parts` };
  }
  if (!(await isSourceGroup(db, hostId, delta.tag))) {
    return { status: "refused", error: `${delta.tag} is not a source group of this host` };
  }
  const id = lineageKey(hostId, delta.tag);
  const lineage = id.toString();
  const at = delta.time;
  const rows = rowsOf(delta);
  return db.transaction(async (tx) => {
    const head = await lockLineage(tx, id, hostId, delta.tag);
    if (head.snapshot_id === delta.snapshot_id) {
      // Applied before (the agent never heard the ack): say so once, ignore its further parts.
      return delta.part === 0 ? { status: "applied" } : undefined;
    }
    if (delta.part === 0) {
      if (head.snapshot_at !== null && new Date(head.snapshot_at).getTime() >= new Date(at).getTime()) {
        return {
          status: "refused",
          error: "the snapshot is not newer than the newest this group's catalogue holds",
        };
      }
      if (delta.base_snapshot_id !== null && delta.base_snapshot_id !== head.snapshot_id) {
        return {
          status: "resend_full",
          error:
            head.snapshot_id === null
              ? "the server has no catalogue of this group yet"
              : `the server's catalogue of this group is at snapshot ${head.snapshot_id.slice(0, 8)}`,
        };
      }
      if (head.pending_at !== null) {
        await undoPending(tx, lineage, head.pending_at);
      }
      if (delta.base_snapshot_id === null) {
        await tx.execute(
          sql`update file_versions set until_at = ${at}::timestamptz
               where lineage_id = ${lineage}::bigint and until_at is null`,
        );
      }
    } else if (head.pending_snapshot_id !== delta.snapshot_id || head.pending_part !== delta.part - 1) {
      return { status: "refused", error: `part ${delta.part} arrived without the parts before it` };
    }
    await applyRows(tx, lineage, at, rows, delta.base_snapshot_id === null);
    const last = delta.part === delta.parts - 1;
    await tx.execute(
      last
        ? sql`update catalog_lineages
                 set snapshot_id = ${delta.snapshot_id}, snapshot_at = ${at}::timestamptz,
                     pending_snapshot_id = null, pending_at = null, pending_part = null, updated_at = now()
               where id = ${lineage}::bigint`
        : sql`update catalog_lineages
                 set pending_snapshot_id = ${delta.snapshot_id}, pending_at = ${at}::timestamptz,
                     pending_part = ${delta.part}, updated_at = now()
               where id = ${lineage}::bigint`,
    );
    return last ? { status: "applied" } : undefined;
  });
}

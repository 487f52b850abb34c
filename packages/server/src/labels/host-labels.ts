/**
 * @module labels/host-labels
 * Changing hosts' labels (issue 37): one host's (replace or merge) and many hosts' at once, by a
 * selector or a list of ids. Each change is one UPDATE whose new labels are computed in SQL, so a
 * bulk action over the whole fleet is one statement, and a host that would end up with more than
 * LABELS_MAX labels fails the whole change (the transaction rolls back) rather than leaving some
 * hosts changed. Audited in the change's transaction: one entry per host for a host's change, one
 * entry with counts for a bulk action.
 */
import { type Database, hosts } from "@fleetback/db";
import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { Clock } from "../clock.js";
import { invalid, notFound } from "../errors.js";
import type { Ids } from "../ids.js";
import { checkLabelKeys, checkLabels, LABELS_MAX, type Labels, labelsOf } from "./label-rules.js";
import { formatSelector, type Selector } from "./selector.js";
import { selectorSql } from "./selector-sql.js";

export const HOST_LABELS_ACTION = "host.labels";
export const BULK_LABELS_ACTION = "hosts.labels_bulk";

type Deps = { db: Database; clock: Clock; ids: Ids };

export interface LabelEdit {
  set: Labels;
  remove: string[];
}

/** The edit, checked: valid labels and keys, and no key both set and removed. */
export function checkEdit(edit: LabelEdit): LabelEdit {
  const set = checkLabels(edit.set, "set");
  const remove = checkLabelKeys(edit.remove, "remove");
  const both = remove.find((key) => Object.hasOwn(set, key));
  if (both !== undefined) {
    throw invalid(`remove: ${JSON.stringify(both)} is also in set`, [
      { field: "remove", message: `${JSON.stringify(both)} is also in set` },
    ]);
  }
  if (Object.keys(set).length === 0 && remove.length === 0) {
    throw invalid("set: nothing to set or remove", [{ field: "set", message: "nothing to set or remove" }]);
  }
  return { set, remove };
}

function mergedSql(edit: LabelEdit): SQL {
  return sql`((${hosts.labels} || ${JSON.stringify(edit.set)}::jsonb) - array(select jsonb_array_elements_text(${JSON.stringify(edit.remove)}::jsonb)))`;
}

/** Sets the new labels where they differ; refuses (rolling back) any host left over the limit. */
async function applyLabels(
  tx: Database,
  where: SQL | undefined,
  labels: SQL,
  field: string,
): Promise<Array<{ id: string; labels: Labels }>> {
  const rows = await tx
    .update(hosts)
    .set({ labels })
    .where(and(where, sql`${hosts.labels} is distinct from ${labels}`))
    .returning({ id: hosts.id, name: hosts.name, labels: hosts.labels });
  const over = rows.find((row) => Object.keys(labelsOf(row.labels)).length > LABELS_MAX);
  if (over) {
    const count = Object.keys(labelsOf(over.labels)).length;
    const message = `would leave host ${over.name} with ${count} labels; a host has at most ${LABELS_MAX}`;
    throw invalid(`${field}: ${message}`, [{ field, message }]);
  }
  return rows.map((row) => ({ id: row.id, labels: labelsOf(row.labels) }));
}

function diff(before: Labels, after: Labels): { set: Labels; removed: string[] } {
  const set = Object.fromEntries(Object.entries(after).filter(([key, value]) => before[key] !== value));
  return { set, removed: Object.keys(before).filter((key) => !Object.hasOwn(after, key)) };
}

export async function hostLabels(db: Database, hostId: string): Promise<Labels> {
  const [row] = await db.select({ labels: hosts.labels }).from(hosts).where(eq(hosts.id, hostId)).limit(1);
  if (!row) {
    throw notFound(`No host ${hostId}`);
  }
  return labelsOf(row.labels);
}

/** Replaces a host's labels (`replace`) or merges an edit into them. */
/**
 * Runs in a label change's transaction with the hosts whose labels changed: what follows from a
 * host's labels (its policies) changes with them or not at all.
 */
export type LabelsChanged = (tx: Database, hostIds: string[]) => Promise<void>;

export async function changeHostLabels(
  deps: Deps,
  audit: AuditContext,
  hostId: string,
  change: { replace: Labels } | LabelEdit,
  onChanged?: LabelsChanged,
): Promise<Labels> {
  const labels =
    "replace" in change
      ? sql`${JSON.stringify(checkLabels(change.replace, "labels"))}::jsonb`
      : mergedSql(checkEdit(change));
  return deps.db.transaction(async (tx) => {
    const [host] = await tx
      .select({ labels: hosts.labels })
      .from(hosts)
      .where(eq(hosts.id, hostId))
      .for("update");
    if (!host) {
      throw notFound(`No host ${hostId}`);
    }
    const before = labelsOf(host.labels);
    const [changed] = await applyLabels(
      tx,
      eq(hosts.id, hostId),
      labels,
      "replace" in change ? "labels" : "set",
    );
    if (!changed) {
      return before;
    }
    await writeAudit(tx, deps, {
      ...audit,
      action: HOST_LABELS_ACTION,
      targetKind: "host",
      targetId: hostId,
      details: diff(before, changed.labels),
    });
    await onChanged?.(tx, [hostId]);
    return changed.labels;
  });
}

export type BulkTarget = { selector: Selector } | { hostIds: string[] };

export interface BulkResult {
  /** Hosts the target named that exist. */
  matched: number;
  /** Of those, the ones whose labels the edit changed. */
  changed: number;
  /** Ids of the list that name no host. */
  notFound: string[];
}

export async function bulkChangeLabels(
  deps: Deps,
  audit: AuditContext,
  target: BulkTarget,
  edit: LabelEdit,
  onChanged?: LabelsChanged,
): Promise<BulkResult> {
  const checked = checkEdit(edit);
  const where =
    "selector" in target ? selectorSql(hosts.labels, target.selector) : inArray(hosts.id, target.hostIds);
  return deps.db.transaction(async (tx) => {
    const matchedRows = await tx.select({ id: hosts.id }).from(hosts).where(where).for("update");
    const matchedIds = new Set(matchedRows.map((row) => row.id));
    const changed = await applyLabels(tx, where, mergedSql(checked), "set");
    const result: BulkResult = {
      matched: matchedIds.size,
      changed: changed.length,
      notFound: "hostIds" in target ? target.hostIds.filter((id) => !matchedIds.has(id)) : [],
    };
    await writeAudit(tx, deps, {
      ...audit,
      action: BULK_LABELS_ACTION,
      details: {
        ...("selector" in target
          ? { selector: formatSelector(target.selector) }
          : { host_ids: target.hostIds.length }),
        set: checked.set,
        remove: checked.remove,
        matched: result.matched,
        changed: result.changed,
      },
    });
    if (changed.length > 0) {
      await onChanged?.(
        tx,
        changed.map((row) => row.id),
      );
    }
    return result;
  });
}

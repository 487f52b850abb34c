/**
 * @module fleet/fleet-actions
 * Acting on the hosts a label selector matches (issue 37.5): run every group now, pause or resume
 * their schedules, delete them. The selector is never empty (one typo would reach the whole
 * fleet) and an action reaches at most MAX_HOSTS hosts; deletion also names how many hosts it
 * expects, and nothing is deleted when the selector matches another number. Pausing is one
 * statement with one audit entry and one schedule.set to each changed host after the commit.
 */
import { type Database, hosts, sourceGroups } from "@fleetback/db";
import { and, asc, inArray, sql } from "drizzle-orm";
import { type Static, Type } from "typebox";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { conflict, invalid, isRequestError } from "../errors.js";
import { deleteHost } from "../hosts/delete-host.js";
import { pushScheduleSet } from "../hosts/host-push.js";
import { formatSelector, type Selector, selectorFromRequest } from "../labels/selector.js";
import { selectorSql } from "../labels/selector-sql.js";
import type { BackupDeps } from "../sources/dispatch-backup.js";
import { runGroupNowFor } from "../sources/source-group-requests.js";

export const MAX_HOSTS = 1_000;

const SelectorText = Type.String({
  minLength: 1,
  maxLength: 4096,
  description: "the hosts, as a label selector (`env=prod,role in (db,web)`); never empty",
});

export const FleetActionBody = Type.Object(
  {
    selector: SelectorText,
    action: Type.Union([Type.Literal("run"), Type.Literal("pause"), Type.Literal("resume")], {
      description:
        "run: every source group of each host now (queued for an offline host); pause/resume: its schedules",
    }),
  },
  { additionalProperties: false },
);
export type FleetActionBody = Static<typeof FleetActionBody>;

export const FleetDeleteBody = Type.Object(
  {
    selector: SelectorText,
    confirm_count: Type.Integer({ minimum: 1, description: "how many hosts you expect it to match" }),
  },
  { additionalProperties: false },
);

export interface FleetActionResult {
  action: string;
  selector: string;
  matched: number;
  hosts: Array<{ host_id: string; host_name: string; outcome: string }>;
}

async function matching(
  db: Database,
  text: string,
): Promise<{ selector: Selector; rows: Array<{ id: string; name: string }> }> {
  const selector = selectorFromRequest(text, "selector");
  if (selector.length === 0) {
    throw invalid("selector: is empty and would match every host", [
      { field: "selector", message: "is empty and would match every host" },
    ]);
  }
  const rows = await db
    .select({ id: hosts.id, name: hosts.name })
    .from(hosts)
    .where(selectorSql(hosts.labels, selector))
    .orderBy(asc(hosts.name), asc(hosts.id))
    .limit(MAX_HOSTS + 1);
  if (rows.length > MAX_HOSTS) {
    throw invalid(`selector: matches more than ${MAX_HOSTS} hosts; act on fewer at a time`, [
      { field: "selector", message: `matches more than ${MAX_HOSTS} hosts` },
    ]);
  }
  return { selector, rows };
}

export async function actOnSelector(
  deps: BackupDeps & Pick<ServerDeps, "hub">,
  audit: AuditContext,
  body: FleetActionBody,
): Promise<FleetActionResult> {
  const { selector, rows } = await matching(deps.db, body.selector);
  const result: FleetActionResult = {
    action: body.action,
    selector: formatSelector(selector),
    matched: rows.length,
    hosts: [],
  };
  if (body.action === "run") {
    const groups = await deps.db
      .select({ id: sourceGroups.id, hostId: sourceGroups.hostId })
      .from(sourceGroups)
      .where(inArray(sourceGroups.hostId, rows.length > 0 ? rows.map((row) => row.id) : [""]))
      .orderBy(asc(sourceGroups.name));
    for (const host of rows) {
      const outcomes: string[] = [];
      for (const group of groups.filter((g) => g.hostId === host.id)) {
        try {
          outcomes.push((await runGroupNowFor(deps, audit, host.id, group.id)).outcome);
        } catch (err) {
          // One host's refusal (offline with no retries) is its outcome, not the action's.
          if (!isRequestError(err)) {
            throw err;
          }
          outcomes.push(`refused: ${err.message}`);
        }
      }
      result.hosts.push({
        host_id: host.id,
        host_name: host.name,
        outcome: outcomes.length === 0 ? "no source group" : outcomes.join("; "),
      });
    }
    return result;
  }
  const paused = body.action === "pause";
  const now = deps.clock.now();
  const changed = await deps.db.transaction(async (tx) => {
    const updated = await tx
      .update(hosts)
      .set({ schedulesPaused: paused, scheduleVersion: sql`${hosts.scheduleVersion} + 1`, updatedAt: now })
      .where(and(selectorSql(hosts.labels, selector), sql`${hosts.schedulesPaused} <> ${paused}`))
      .returning({ id: hosts.id });
    await writeAudit(tx, deps, {
      ...audit,
      action: paused ? "hosts.schedules_pause" : "hosts.schedules_resume",
      details: { selector: result.selector, matched: rows.length, changed: updated.length },
    });
    return new Set(updated.map((row) => row.id));
  });
  for (const host of rows) {
    if (changed.has(host.id)) {
      await pushScheduleSet(deps, host.id);
    }
    result.hosts.push({
      host_id: host.id,
      host_name: host.name,
      outcome: changed.has(host.id)
        ? paused
          ? "paused"
          : "resumed"
        : paused
          ? "already paused"
          : "not paused",
    });
  }
  return result;
}

/** Deletes the hosts the selector matches, only when they are as many as the caller expects. */
export async function deleteBySelector(
  deps: Pick<ServerDeps, "db" | "hub" | "clock" | "ids">,
  audit: AuditContext,
  body: Static<typeof FleetDeleteBody>,
): Promise<FleetActionResult> {
  const { selector, rows } = await matching(deps.db, body.selector);
  if (rows.length !== body.confirm_count) {
    throw conflict(
      `confirm_count: the selector matches ${rows.length} host${rows.length === 1 ? "" : "s"}, not ${body.confirm_count}; nothing was deleted`,
      [{ field: "confirm_count", message: `the selector matches ${rows.length}` }],
    );
  }
  const result: FleetActionResult = {
    action: "delete",
    selector: formatSelector(selector),
    matched: rows.length,
    hosts: [],
  };
  for (const host of rows) {
    await deleteHost(deps, audit, host.id);
    result.hosts.push({ host_id: host.id, host_name: host.name, outcome: "deleted" });
  }
  return result;
}

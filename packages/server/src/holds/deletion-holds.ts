/**
 * @module holds/deletion-holds
 * Deletion holds (issue 33). While a host has an open hold, no forget or prune of its repository
 * or its mirror is dispatched (jobs/dispatch-job.ts asks `isDeletionHeld`), whoever starts it: the
 * schedule, an operator, the mirror's upkeep. Two things open one: a backup far outside its
 * group's baseline (`backup_anomaly`), and a forget planned by the server that would remove more
 * than FLEETBACK_FORGET_HOLD_SHARE of a group's snapshots (`large_forget`, which keeps the plan so
 * that releasing it runs exactly that). Each open hold has its alert of the same name
 * (`backup_anomaly`, `forget_plan_held`), so it is notified like any alert; only an admin releases
 * a hold (release-hold.ts), with a reason, in the audit log.
 */
import { type Database, type DeletionHold, type DeletionHoldKind, deletionHolds } from "@fleetback/db";
import { and, asc, count, countDistinct, eq, isNull } from "drizzle-orm";
import type { AlertKind } from "../alerts/alerts.js";
import { raiseAlert } from "../alerts/alerts.js";
import type { ServerDeps } from "../deps.js";
import { hostNameOf } from "../hosts/host-name.js";

type HoldDeps = Pick<ServerDeps, "db" | "ids" | "log" | "notifier">;

export const HOLD_ALERT: Record<DeletionHoldKind, AlertKind> = {
  backup_anomaly: "backup_anomaly",
  large_forget: "forget_plan_held",
};

export async function openHoldsOf(db: Database, hostId: string): Promise<DeletionHold[]> {
  return db
    .select()
    .from(deletionHolds)
    .where(and(eq(deletionHolds.hostId, hostId), isNull(deletionHolds.releasedAt)))
    .orderBy(asc(deletionHolds.createdAt));
}

/** Whether a forget or prune of the host's repository must wait. */
export async function isDeletionHeld(db: Database, hostId: string): Promise<boolean> {
  const [row] = await db
    .select({ n: count() })
    .from(deletionHolds)
    .where(and(eq(deletionHolds.hostId, hostId), isNull(deletionHolds.releasedAt)));
  return Number(row?.n ?? 0) > 0;
}

/** Hosts with at least one open hold, for the dashboard and /metrics. */
export async function heldHostCount(db: Database): Promise<number> {
  const [row] = await db
    .select({ n: countDistinct(deletionHolds.hostId) })
    .from(deletionHolds)
    .where(isNull(deletionHolds.releasedAt));
  return Number(row?.n ?? 0);
}

/**
 * Opens the host's hold of this kind, or leaves the open one as it is (its first reason stands:
 * that is what an admin must look at). Raises its alert when it opened.
 */
export async function openHold(
  deps: HoldDeps,
  input: {
    hostId: string;
    kind: DeletionHoldKind;
    reason: string;
    details: Record<string, unknown>;
    jobId?: string;
  },
  now: Date,
): Promise<{ hold: DeletionHold; opened: boolean }> {
  const [created] = await deps.db
    .insert(deletionHolds)
    .values({
      id: deps.ids.ulid(now),
      hostId: input.hostId,
      kind: input.kind,
      reason: input.reason.slice(0, 2_000),
      details: input.details,
      createdAt: now,
    })
    .onConflictDoNothing()
    .returning();
  if (created === undefined) {
    const [open] = await deps.db
      .select()
      .from(deletionHolds)
      .where(
        and(
          eq(deletionHolds.hostId, input.hostId),
          eq(deletionHolds.kind, input.kind),
          isNull(deletionHolds.releasedAt),
        ),
      );
    if (open === undefined) {
      throw new Error("a deletion hold neither inserted nor open");
    }
    return { hold: open, opened: false };
  }
  const message = `Forget and prune of this host are held until an admin releases the hold: ${created.reason}`;
  const { alert, opened } = await raiseAlert(
    deps,
    { hostId: input.hostId, kind: HOLD_ALERT[input.kind], dedupKey: "" },
    { message, jobId: input.jobId ?? null },
    now,
  );
  deps.log.warn({ host_id: input.hostId, hold_id: created.id, kind: input.kind }, "deletion hold opened");
  if (opened) {
    deps.notifier.alertOpened(alert, { hostName: await hostNameOf(deps.db, input.hostId) });
  }
  return { hold: created, opened: true };
}

export function holdJson(hold: DeletionHold) {
  return {
    id: hold.id,
    kind: hold.kind,
    reason: hold.reason,
    details: hold.details,
    created_at: hold.createdAt,
    released_at: hold.releasedAt,
    release_reason: hold.releaseReason,
  };
}

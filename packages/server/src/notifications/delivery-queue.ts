/**
 * @module notifications/delivery-queue
 * notification_deliveries: one row per (notification, channel) until it is sent or given up. A
 * server claims due rows for a lease with FOR UPDATE SKIP LOCKED, so servers sharing a database
 * split the due rows between them instead of sending any twice. Every later change is made only
 * while the claim is still the one this server took: a claim that outlived its lease (a stalled
 * process) may already belong to another server.
 */
import {
  type Database,
  type NotificationDelivery,
  notificationDeliveries,
  type QueuedNotification,
} from "@fleetback/db";
import { and, asc, eq, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";

const t = notificationDeliveries;

export interface NewDelivery {
  id: string;
  channelId: string;
  alertId: string | null;
  event: NotificationDelivery["event"];
  notification: QueuedNotification;
  /** Enqueue time; the first attempt is due at once. */
  at: Date;
}

/** A row this server holds: its id and the lease end it set. */
export interface Claim {
  id: string;
  claimedUntil: Date;
}

export type ClaimedDelivery = NotificationDelivery & { claimedUntil: Date };

export async function enqueueDeliveries(db: Database, rows: readonly NewDelivery[]): Promise<void> {
  if (rows.length === 0) {
    return;
  }
  await db.insert(t).values(
    rows.map((row) => ({
      id: row.id,
      channelId: row.channelId,
      alertId: row.alertId,
      event: row.event,
      notification: row.notification,
      nextAttemptAt: row.at,
      createdAt: row.at,
    })),
  );
}

function claimable(now: Date) {
  return and(lte(t.nextAttemptAt, now), or(isNull(t.claimedUntil), lt(t.claimedUntil, now)));
}

/** Claims up to `limit` due rows until `leaseUntil`, oldest due first. */
export async function claimDueDeliveries(
  db: Database,
  options: { now: Date; leaseUntil: Date; limit: number },
): Promise<ClaimedDelivery[]> {
  if (options.limit <= 0) {
    return [];
  }
  const due = db
    .select({ id: t.id })
    .from(t)
    .where(claimable(options.now))
    .orderBy(asc(t.nextAttemptAt), asc(t.id))
    .limit(options.limit)
    .for("update", { skipLocked: true });
  const rows = await db
    .update(t)
    .set({ claimedUntil: options.leaseUntil })
    .where(inArray(t.id, due))
    .returning();
  return rows
    .map((row) => ({ ...row, claimedUntil: options.leaseUntil }))
    .sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime() || a.id.localeCompare(b.id));
}

function held(claim: Claim) {
  return and(eq(t.id, claim.id), eq(t.claimedUntil, claim.claimedUntil));
}

/** The delivery ended (sent or given up). False when the row was no longer ours. */
export async function finishDelivery(db: Database, claim: Claim): Promise<boolean> {
  const rows = await db.delete(t).where(held(claim)).returning({ id: t.id });
  return rows.length > 0;
}

/** Another attempt at `nextAttemptAt`, open to any server. False when the row was no longer ours. */
export async function rescheduleDelivery(db: Database, claim: Claim, nextAttemptAt: Date): Promise<boolean> {
  const rows = await db
    .update(t)
    .set({ attempts: sql`${t.attempts} + 1`, nextAttemptAt, claimedUntil: null })
    .where(held(claim))
    .returning({ id: t.id });
  return rows.length > 0;
}

/** Whether some row could be claimed at `now`. */
export async function hasDueDelivery(db: Database, now: Date): Promise<boolean> {
  const rows = await db.select({ id: t.id }).from(t).where(claimable(now)).limit(1);
  return rows.length > 0;
}

/**
 * When the next row becomes claimable (its due time, or the end of someone's claim on it if that
 * is later); undefined when nothing waits.
 */
export async function nextClaimableAt(db: Database): Promise<Date | undefined> {
  const [row] = await db
    .select({
      at: sql<Date | null>`min(greatest(${t.nextAttemptAt}, coalesce(${t.claimedUntil}, ${t.nextAttemptAt})))`.mapWith(
        t.nextAttemptAt,
      ),
    })
    .from(t);
  return row?.at ?? undefined;
}

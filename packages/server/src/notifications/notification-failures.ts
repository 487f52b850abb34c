/**
 * @module notifications/notification-failures
 * fleetback_notification_failures_total, kept in `notification_failure_counts`: the notification
 * log writer counts an alert delivery that ended failed in the transaction that logs it, so the
 * counter is cluster-wide, never goes down when a channel and its log are deleted, and a scrape
 * reads one row per channel kind instead of the whole log.
 */
import { type Database, notificationFailureCounts } from "@fleetback/db";
import { sql } from "drizzle-orm";

/** Adds one failure to the kind of `channelId`; nothing when the channel is gone. */
export async function countNotificationFailure(db: Database, channelId: string): Promise<void> {
  await db.execute(sql`
    insert into notification_failure_counts (channel_kind, failures)
    select kind, 1 from notification_channels where id = ${channelId}
    on conflict (channel_kind) do update
       set failures = notification_failure_counts.failures + excluded.failures`);
}

export async function readNotificationFailures(db: Database): Promise<Map<string, number>> {
  const rows = await db.select().from(notificationFailureCounts);
  return new Map(rows.map((row) => [row.channelKind, Number(row.failures)]));
}

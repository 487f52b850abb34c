/**
 * @module notifications/notification-log
 * Every delivery attempt, one row each. Error texts arrive here already scrubbed of the channel's
 * secrets. A channel deleted mid-delivery takes its rows with it (cascade), so the writer reports
 * that as a value and the notifier stops retrying.
 */
import {
  alerts,
  channelDigests,
  type Database,
  hosts,
  isForeignKeyViolation,
  type NotificationStatus,
  notificationChannels,
  notificationLog,
} from "@fleetback/db";
import { desc, eq } from "drizzle-orm";
import type { NotificationEvent } from "./message.js";
import { countNotificationFailure } from "./notification-failures.js";

export interface AttemptRecord {
  id: string;
  at: Date;
  channelId: string;
  alertId: string | null;
  event: NotificationEvent;
  attempt: number;
  status: NotificationStatus;
  statusCode?: number | undefined;
  error?: string | undefined;
}

const ERROR_LIMIT = 1000;

/** "written", or "channel_gone" when the channel was deleted meanwhile. */
export async function recordAttempt(
  db: Database,
  record: AttemptRecord,
): Promise<"written" | "channel_gone"> {
  const values = {
    id: record.id,
    channelId: record.channelId,
    alertId: record.alertId,
    event: record.event,
    attempt: record.attempt,
    status: record.status,
    statusCode: record.statusCode ?? null,
    error: record.error === undefined ? null : record.error.slice(0, ERROR_LIMIT),
    createdAt: record.at,
  };
  // A failed alert delivery is counted for /metrics with its log row, so it counts once.
  const write = (row: typeof values) =>
    db.transaction(async (tx) => {
      await tx.insert(notificationLog).values(row);
      if (record.status === "failed" && record.event !== "test") {
        await countNotificationFailure(tx, record.channelId);
      }
      if (record.status === "sent" && record.event === "digest") {
        // fleetback_digest_last_sent_timestamp_seconds: a digest that stops arriving is the alarm.
        await tx
          .update(channelDigests)
          .set({ sentAt: record.at })
          .where(eq(channelDigests.channelId, record.channelId));
      }
    });
  try {
    await write(values);
    return "written";
  } catch (err) {
    if (isForeignKeyViolation(err, "notification_log_channel_id_fkey")) {
      return "channel_gone";
    }
    if (isForeignKeyViolation(err, "notification_log_alert_id_fkey") && values.alertId !== null) {
      // The alert went with its host; the attempt is still worth keeping.
      await write({ ...values, alertId: null });
      return "written";
    }
    throw err;
  }
}

export interface LogView {
  id: string;
  channel_id: string;
  channel_name: string;
  channel_kind: string;
  alert_id: string | null;
  host_id: string | null;
  host_name: string | null;
  event: string;
  attempt: number;
  status: NotificationStatus;
  status_code: number | null;
  error: string | null;
  created_at: Date;
}

/** Newest first; ids are monotonic, so attempts of the same millisecond keep their order. */
export async function listNotificationLog(
  db: Database,
  options: { limit: number; channelId?: string | undefined },
): Promise<LogView[]> {
  const rows = await db
    .select({
      entry: notificationLog,
      channelName: notificationChannels.name,
      channelKind: notificationChannels.kind,
      hostId: alerts.hostId,
      hostName: hosts.name,
    })
    .from(notificationLog)
    .innerJoin(notificationChannels, eq(notificationChannels.id, notificationLog.channelId))
    .leftJoin(alerts, eq(alerts.id, notificationLog.alertId))
    .leftJoin(hosts, eq(hosts.id, alerts.hostId))
    .where(options.channelId ? eq(notificationLog.channelId, options.channelId) : undefined)
    .orderBy(desc(notificationLog.createdAt), desc(notificationLog.id))
    .limit(options.limit);
  return rows.map(({ entry, channelName, channelKind, hostId, hostName }) => ({
    id: entry.id,
    channel_id: entry.channelId,
    channel_name: channelName,
    channel_kind: channelKind,
    alert_id: entry.alertId,
    host_id: hostId,
    host_name: hostName,
    event: entry.event,
    attempt: entry.attempt,
    status: entry.status,
    status_code: entry.statusCode,
    error: entry.error,
    created_at: entry.createdAt,
  }));
}

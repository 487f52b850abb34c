/**
 * @module Alerts raised by failed jobs, the channels they fan out to, the deliveries still to make
 * and every delivery attempt.
 */
import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  smallint,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { bytea, createdAt, timestamptz, updatedAt } from "./columns.js";
import { jobs } from "./jobs.js";
import { hostIdColumn, userRef } from "./references.js";

export const alerts = pgTable(
  "alerts",
  {
    id: text("id").primaryKey(),
    hostId: hostIdColumn(),
    // `<job kind>_failed` (backup_failed, forget_failed, ...) or agent_update_failed.
    kind: text("kind").notNull(),
    // The source group id for backup_failed; empty for repository-scoped kinds.
    dedupKey: text("dedup_key").notNull().default(""),
    // Overwritten on each re-raise.
    message: text("message").notNull(),
    lastJobId: text("last_job_id").references(() => jobs.id, { onDelete: "set null" }),
    createdAt: createdAt(),
    lastSeenAt: timestamptz("last_seen_at").notNull().defaultNow(),
    resolvedAt: timestamptz("resolved_at"),
    // The operator who resolved it; null when a successful job resolved it.
    resolvedBy: userRef("resolved_by"),
  },
  (t) => [
    // At most one open alert per (host, kind, dedup_key); raising again under a race is a
    // unique violation the writer turns into a re-raise.
    uniqueIndex("alerts_open_key").on(t.hostId, t.kind, t.dedupKey).where(sql`${t.resolvedAt} is null`),
    index("alerts_created_at_idx").on(t.createdAt),
  ],
);

export const NOTIFICATION_CHANNEL_KINDS = ["webhook", "slack", "discord", "ntfy", "gotify", "email"] as const;
export type NotificationChannelKind = (typeof NOTIFICATION_CHANNEL_KINDS)[number];

export const NOTIFICATION_STATUSES = ["sent", "failed", "retrying"] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

export const notificationChannels = pgTable(
  "notification_channels",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull().unique("notification_channels_name_key"),
    kind: text("kind").$type<NotificationChannelKind>().notNull(),
    // URLs, tokens and SMTP passwords of the channel, sealed as one blob.
    sealedConfig: bytea("sealed_config").notNull(),
    enabled: boolean("enabled").notNull().default(true),
    notifyResolved: boolean("notify_resolved").notNull().default(false),
    // The fleet digest (issue 39.1): none, daily or weekly, at digest_time ("HH:MM", FLEETBACK_TZ)
    // on digest_weekday (0 = Sunday, weekly only).
    digestPeriod: text("digest_period").$type<DigestPeriod>(),
    digestTime: text("digest_time"),
    digestWeekday: smallint("digest_weekday"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    check(
      "notification_channels_kind_check",
      sql`${t.kind} in ('webhook', 'slack', 'discord', 'ntfy', 'gotify', 'email')`,
    ),
    check(
      "notification_channels_digest_check",
      sql`(${t.digestPeriod} is null and ${t.digestTime} is null and ${t.digestWeekday} is null)
        or (${t.digestPeriod} = 'daily' and ${t.digestTime} ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$' and ${t.digestWeekday} is null)
        or (${t.digestPeriod} = 'weekly' and ${t.digestTime} ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$' and ${t.digestWeekday} between 0 and 6)`,
    ),
  ],
);

export const DIGEST_PERIODS = ["daily", "weekly"] as const;
export type DigestPeriod = (typeof DIGEST_PERIODS)[number];

/** `channel_id`, cascading: a row that means nothing without its channel. */
function channelIdColumn() {
  return text("channel_id")
    .notNull()
    .references(() => notificationChannels.id, { onDelete: "cascade" });
}

/**
 * Where each channel's digest stands: the last slot taken (so a second server or a restart never
 * sends it twice), what that digest saw (the next one says what changed against it) and when one
 * was last delivered (fleetback_digest_last_sent_timestamp_seconds).
 */
export const channelDigests = pgTable("channel_digests", {
  channelId: text("channel_id")
    .primaryKey()
    .references(() => notificationChannels.id, { onDelete: "cascade" }),
  slotAt: timestamptz("slot_at").notNull(),
  state: jsonb("state"),
  queuedAt: timestamptz("queued_at"),
  sentAt: timestamptz("sent_at"),
});

export const notificationLog = pgTable(
  "notification_log",
  {
    id: text("id").primaryKey(),
    channelId: channelIdColumn(),
    alertId: text("alert_id").references(() => alerts.id, { onDelete: "set null" }),
    // e.g. alert.opened, alert.resolved, test.
    event: text("event").notNull(),
    attempt: integer("attempt").notNull().default(1),
    status: text("status").$type<NotificationStatus>().notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    createdAt: createdAt(),
  },
  (t) => [
    check("notification_log_status_check", sql`${t.status} in ('sent', 'failed', 'retrying')`),
    index("notification_log_channel_id_created_at_idx").on(t.channelId, t.createdAt.desc()),
    index("notification_log_alert_id_idx").on(t.alertId),
  ],
);

/** A notification as rendered when its alert changed; later attempts send exactly this. */
export interface QueuedNotification {
  title: string;
  body: string;
  link: string;
  data: Record<string, unknown>;
  /** The same as an HTML page, for mail (digests, reports). */
  html?: string;
  /** Mail only: these recipients instead of the channel's (a scheduled report's list). */
  to?: string[];
  /** Mail only: one file attached (a report's CSV). */
  attachment?: { filename: string; contentType: string; content: string };
}

export type QueuedEvent = "alert.opened" | "alert.resolved" | "digest" | "report";

/**
 * Deliveries not yet sent nor given up, one per (notification, channel). A server claims a due row
 * until `claimed_until` while it attempts it; a claim left by a crashed server simply expires.
 */
export const notificationDeliveries = pgTable(
  "notification_deliveries",
  {
    id: text("id").primaryKey(),
    channelId: channelIdColumn(),
    alertId: text("alert_id").references(() => alerts.id, { onDelete: "set null" }),
    // Test notifications are sent at once, never queued.
    event: text("event").$type<QueuedEvent>().notNull(),
    notification: jsonb("notification").$type<QueuedNotification>().notNull(),
    // Attempts made so far; the next one is attempts + 1.
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamptz("next_attempt_at").notNull(),
    claimedUntil: timestamptz("claimed_until"),
    createdAt: createdAt(),
  },
  (t) => [
    check(
      "notification_deliveries_event_check",
      sql`${t.event} in ('alert.opened', 'alert.resolved', 'digest', 'report')`,
    ),
    check("notification_deliveries_attempts_check", sql`${t.attempts} >= 0`),
    // Every delivery pass scans for due rows.
    index("notification_deliveries_next_attempt_at_idx").on(t.nextAttemptAt),
    index("notification_deliveries_channel_id_idx").on(t.channelId),
  ],
);

export type Alert = typeof alerts.$inferSelect;
export type NewAlert = typeof alerts.$inferInsert;
export type NotificationChannel = typeof notificationChannels.$inferSelect;
export type NewNotificationChannel = typeof notificationChannels.$inferInsert;
export type NotificationLogEntry = typeof notificationLog.$inferSelect;
export type NewNotificationLogEntry = typeof notificationLog.$inferInsert;
export type NotificationDelivery = typeof notificationDeliveries.$inferSelect;
export type ChannelDigest = typeof channelDigests.$inferSelect;
export type NewNotificationDelivery = typeof notificationDeliveries.$inferInsert;

export const REPORT_PERIODS = ["weekly", "monthly"] as const;
export type ReportPeriod = (typeof REPORT_PERIODS)[number];

/**
 * The evidence report for the last period, mailed on a schedule (issue 39.3) through an email
 * channel's SMTP settings to a list of its own. slot_at is the last slot taken, as for digests.
 */
export const reportSchedules = pgTable(
  "report_schedules",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull().unique("report_schedules_name_key"),
    channelId: channelIdColumn(),
    recipients: jsonb("recipients").$type<string[]>().notNull(),
    period: text("period").$type<ReportPeriod>().notNull(),
    // "HH:MM" in FLEETBACK_TZ; weekly on `weekday` (0 = Sunday), monthly on the 1st.
    time: text("time").notNull(),
    weekday: smallint("weekday"),
    selector: text("selector").notNull().default(""),
    groups: text("groups").notNull().default(""),
    enabled: boolean("enabled").notNull().default(true),
    slotAt: timestamptz("slot_at").notNull(),
    queuedAt: timestamptz("queued_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    check(
      "report_schedules_when_check",
      sql`${t.time} ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'
        and ((${t.period} = 'weekly' and ${t.weekday} between 0 and 6) or (${t.period} = 'monthly' and ${t.weekday} is null))`,
    ),
    index("report_schedules_channel_id_idx").on(t.channelId),
  ],
);
export type ReportSchedule = typeof reportSchedules.$inferSelect;

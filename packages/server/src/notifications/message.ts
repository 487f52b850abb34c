/**
 * @module notifications/message
 * What a notification says, independent of the channel: a title, a plain-text body and a link to
 * the host page. Each channel kind then shapes this into its own payload (deliver.ts).
 */

export type NotificationEvent = "alert.opened" | "alert.resolved" | "digest" | "report" | "test";

/** The alert fields a notification needs; an `alerts` row satisfies it as it is. */
export interface NotifiableAlert {
  id: string;
  hostId: string;
  /** `<job kind>_failed` (backup_failed, forget_failed, ...) or agent_update_failed. */
  kind: string;
  dedupKey: string;
  message: string;
  lastJobId?: string | null;
  createdAt: Date;
  resolvedAt?: Date | null;
}

/** What the alert row does not hold but a person reading the notification wants. */
export interface AlertContext {
  hostName: string;
  /** The source group's name, for a backup_failed alert (dedup key = group id). */
  sourceGroupName?: string | undefined;
  /** Why a resolved alert ended, when not by a successful run of its kind. */
  resolvedBecause?: string | undefined;
}

export interface Notification {
  event: NotificationEvent;
  /** One line, e.g. "backup_failed on web-1". */
  title: string;
  /** Plain text, without the link. */
  body: string;
  /** The host page (or the server for a test); absolute. */
  link: string;
  alertId: string | null;
  /** The webhook payload: stable snake_case fields for machines. */
  data: Record<string, unknown>;
  /** The body as an HTML page, sent by mail beside the text (digests, reports). */
  html?: string | undefined;
  /** Mail only: these recipients instead of the channel's. */
  to?: string[] | undefined;
  /** Mail only: one attached file. */
  attachment?: { filename: string; contentType: string; content: string } | undefined;
}

export function alertNotification(
  event: "alert.opened" | "alert.resolved",
  alert: NotifiableAlert,
  context: AlertContext,
  baseUrl: string,
  now: Date,
): Notification {
  const link = `${baseUrl}/hosts/${encodeURIComponent(alert.hostId)}`;
  const group = context.sourceGroupName ? ` (${context.sourceGroupName})` : "";
  const title =
    event === "alert.opened"
      ? `${alert.kind} on ${context.hostName}${group}`
      : `Resolved: ${alert.kind} on ${context.hostName}${group}`;
  const body =
    event === "alert.opened"
      ? alert.message
      : `${context.resolvedBecause ?? "Resolved after a successful run."} It was: ${alert.message}`;
  return {
    event,
    title,
    body,
    link,
    alertId: alert.id,
    data: {
      event,
      sent_at: now.toISOString(),
      url: link,
      alert: {
        id: alert.id,
        kind: alert.kind,
        dedup_key: alert.dedupKey,
        message: alert.message,
        host_id: alert.hostId,
        host_name: context.hostName,
        source_group_name: context.sourceGroupName ?? null,
        last_job_id: alert.lastJobId ?? null,
        created_at: alert.createdAt.toISOString(),
        resolved_at: alert.resolvedAt ? alert.resolvedAt.toISOString() : null,
      },
    },
  };
}

export function testNotification(channelName: string, baseUrl: string, now: Date): Notification {
  return {
    event: "test",
    title: "Fleetback test notification",
    body: `This is a test of the notification channel "${channelName}". Alerts will arrive like this.`,
    link: `${baseUrl}/settings/notifications`,
    alertId: null,
    data: {
      event: "test",
      sent_at: now.toISOString(),
      channel: channelName,
      url: `${baseUrl}/settings/notifications`,
    },
  };
}

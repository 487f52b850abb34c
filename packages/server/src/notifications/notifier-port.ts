/**
 * @module notifications/notifier-port
 * The Notifier port alone, so ServerDeps and the alert modules can name it without importing the
 * implementation (notifier.ts), which itself takes its collaborators from ServerDeps.
 */
import type { AlertContext, NotifiableAlert } from "./message.js";

export interface TestOutcome {
  status: "sent" | "failed";
  statusCode: number | null;
  /** Scrubbed of the channel's secrets. */
  error: string | null;
}

export interface Notifier {
  /** A new alert: queued for every enabled channel, sent in the background. Never throws or waits. */
  alertOpened(alert: NotifiableAlert, context: AlertContext): void;
  /** A resolved alert: queued for enabled channels with notify_resolved. Never throws or waits. */
  alertResolved(alert: NotifiableAlert, context: AlertContext): void;
  /** One attempt to one channel (enabled or not), awaited, logged as event `test`, never queued. */
  sendTest(channelId: string): Promise<TestOutcome>;
  /**
   * Resolves once this notifier has nothing in flight and no queued delivery is due by the clock
   * (a due one is started at once rather than at the next pass). Deliveries waiting for a later
   * retry do not hold it up; after close() neither do due ones: they wait for the next start.
   */
  idle(): Promise<void>;
  /**
   * Stops the delivery passes, waits for attempts in flight (bounded), then aborts what is left.
   * Whatever was not delivered stays queued for the next start or another server.
   */
  close(): Promise<void>;
}

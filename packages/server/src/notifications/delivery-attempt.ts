/**
 * @module notifications/delivery-attempt
 * One attempt to one channel and its record, shared by queued deliveries and channel tests: the
 * attempt has its own timeout and ends early when the server shuts down; its error text is
 * scrubbed of the channel's secrets before it reaches notification_log or the server log.
 */

import { createScrubber } from "@fleetback/crypto";
import type { NotificationStatus } from "@fleetback/db";
import { systemTimers, type Timers } from "@fleetback/protocol";
import type { ServerDeps } from "../deps.js";
import { createMonotonicUlids } from "../ids.js";
import { createAddressPolicy } from "./address-policy.js";
import { channelTarget, secretValues } from "./channel-config.js";
import type { StoredChannel } from "./channels.js";
import { type AttemptResult, attemptDelivery, type DeliveryPorts } from "./deliver.js";
import type { Notification } from "./message.js";
import { recordAttempt } from "./notification-log.js";

export interface DeliveryAttempts {
  /** Never throws; a failure's error text is already scrubbed. */
  attempt(channel: StoredChannel, n: Notification): Promise<AttemptResult>;
  /** The notification_log row and a server log line; "channel_gone" when it was deleted meanwhile. */
  record(
    channel: StoredChannel,
    n: Notification,
    attemptNo: number,
    status: NotificationStatus,
    result: AttemptResult,
  ): Promise<"written" | "channel_gone">;
}

export function createDeliveryAttempts(
  deps: Pick<ServerDeps, "db" | "log" | "clock" | "config">,
  options: {
    ports: DeliveryPorts;
    attemptTimeoutMs: number;
    shutdown: AbortSignal;
    /** Runs each attempt's deadline: a test's manual timers decide when an attempt times out. */
    timers?: Timers;
  },
): DeliveryAttempts {
  const timers = options.timers ?? systemTimers;
  // Attempts of the same millisecond keep their order in the log.
  const nextId = createMonotonicUlids();
  return {
    async attempt(channel, n) {
      if (!channel.settings) {
        return { ok: false, retryable: false, error: channel.problem ?? "stored config cannot be opened" };
      }
      const deadline = new AbortController();
      // The reason AbortSignal.timeout would give: the error text reads it as "timed out".
      const cancelDeadline = timers.after(options.attemptTimeoutMs, () =>
        deadline.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
      );
      const signal = AbortSignal.any([options.shutdown, deadline.signal]);
      let result: AttemptResult;
      try {
        result = await attemptDelivery(
          channel.settings,
          n,
          options.ports,
          // Read at every attempt: the allow-list a test server or a restart sets is the one obeyed.
          createAddressPolicy(deps.config.notifyAllowNetworks),
          signal,
          options.attemptTimeoutMs,
        );
      } finally {
        cancelDeadline();
      }
      if (result.ok) {
        return result;
      }
      if (signal.aborted && options.shutdown.aborted) {
        // Not the endpoint's verdict: the delivery stays queued for the next start.
        return { ...result, retryable: true, error: "aborted: the server shut down" };
      }
      const scrub = createScrubber(secretValues(channel.settings));
      return { ...result, error: scrub(result.error) };
    },

    async record(channel, n, attemptNo, status, result) {
      const at = deps.clock.now();
      const written = await recordAttempt(deps.db, {
        id: nextId(at),
        at,
        channelId: channel.row.id,
        alertId: n.alertId,
        event: n.event,
        attempt: attemptNo,
        status,
        statusCode: result.statusCode,
        error: result.ok ? undefined : result.error,
      });
      const fields = {
        channel_id: channel.row.id,
        channel_kind: channel.row.kind,
        target: channel.settings ? channelTarget(channel.settings) : undefined,
        alert_id: n.alertId,
        event: n.event,
        attempt: attemptNo,
        status,
        status_code: result.statusCode,
        error: result.ok ? undefined : result.error,
      };
      if (status === "sent") {
        deps.log.info(fields, "notification sent");
      } else {
        deps.log.warn(
          fields,
          status === "retrying" ? "notification attempt failed; retrying" : "notification failed",
        );
      }
      return written;
    },
  };
}

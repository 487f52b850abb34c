/**
 * @module digest/digest-ticker
 * Sends each channel's digest at its time (issue 39.1). Every minute, under an advisory lock, a
 * channel whose latest slot is later than the one it last took gets the digest built against what
 * its previous digest saw; the delivery is queued (so it is retried like an alert's) and the slot
 * and the new state are written in the same transaction: neither a second server nor a restart
 * sends it twice, and a server that was down for three days sends one digest, not three. A digest
 * goes out even when nothing happened: its absence is the alarm.
 */
import { channelDigests, notificationChannels, withAdvisoryLock } from "@fleetback/db";
import { and, eq, isNotNull } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import { createMonotonicUlids } from "../ids.js";
import { dueSlot } from "../maintenance/due-slot.js";
import { enqueueDeliveries } from "../notifications/delivery-queue.js";
import { DIGEST_PERIOD_MS, digestCron, digestOf } from "../notifications/digest-schedule.js";
import { buildDigest, type DigestState } from "./digest-content.js";
import { digestNotification } from "./digest-text.js";

export const DIGEST_TICK_PERIOD_MS = 60_000;

type TickDeps = Pick<ServerDeps, "db" | "config" | "clock" | "log">;

export interface DigestTickReport {
  /** Channels whose digest was queued this tick. */
  queued: string[];
}

const nextId = createMonotonicUlids();

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/** The stored state, when it still has the shape this version writes; else none (a first digest). */
function previousState(value: unknown): DigestState | undefined {
  if (typeof value !== "object" || value === null) {
    return undefined;
  }
  const state = value as Record<string, unknown>;
  const lists = ["hosts", "failing", "overdue", "offline", "held", "attention"] as const;
  if (typeof state.at !== "string" || !lists.every((name) => isStringList(state[name]))) {
    return undefined;
  }
  return state as unknown as DigestState;
}

export async function digestTick(deps: TickDeps, now: Date): Promise<DigestTickReport> {
  const report: DigestTickReport = { queued: [] };
  await withAdvisoryLock(deps.db, "digest-ticker", async (tx) => {
    const rows = await tx
      .select({ channel: notificationChannels, digest: channelDigests })
      .from(notificationChannels)
      .leftJoin(channelDigests, eq(channelDigests.channelId, notificationChannels.id))
      .where(and(eq(notificationChannels.enabled, true), isNotNull(notificationChannels.digestPeriod)));
    for (const { channel, digest } of rows) {
      const setting = digestOf(channel);
      if (!setting) {
        continue;
      }
      if (!digest) {
        // Set before this table kept its clock: count from now, as a new setting does.
        await tx.insert(channelDigests).values({ channelId: channel.id, slotAt: now }).onConflictDoNothing();
        continue;
      }
      const slot = dueSlot(digestCron(setting), deps.config.timeZone, now, digest.slotAt);
      if (!slot) {
        continue;
      }
      const built = await buildDigest(
        { ...deps, db: tx },
        previousState(digest.state),
        DIGEST_PERIOD_MS[setting.period],
      );
      const notification = digestNotification(built, setting.period, deps.config.baseUrl);
      await enqueueDeliveries(tx, [
        {
          id: nextId(now),
          channelId: channel.id,
          alertId: null,
          event: "digest",
          notification,
          at: now,
        },
      ]);
      await tx
        .update(channelDigests)
        .set({ slotAt: slot, state: built.state, queuedAt: now })
        .where(eq(channelDigests.channelId, channel.id));
      report.queued.push(channel.id);
    }
  });
  if (report.queued.length > 0) {
    deps.log.info({ channels: report.queued.length }, "fleet digest queued");
  }
  return report;
}

/**
 * @module reports/report-ticker
 * Mails each scheduled evidence report at its time (issue 39.3), the way digest-ticker.ts sends
 * digests: under an advisory lock a schedule whose latest slot is later than the one it took gets
 * the report for the period before that slot, queued as a delivery of its email channel (retried
 * and logged like an alert) in the transaction that takes the slot. A report that cannot be built
 * (its selector now matches too many hosts) is still mailed, saying why, so a quiet inbox never
 * means "nothing to report". A schedule whose channel is disabled sends nothing.
 */
import { notificationChannels, reportSchedules, withAdvisoryLock } from "@fleetback/db";
import { and, eq } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import { RequestError } from "../errors.js";
import { evidenceQueryOf } from "../evidence/evidence-query.js";
import { evidenceReport } from "../evidence/evidence-report.js";
import { createMonotonicUlids } from "../ids.js";
import { dueSlot } from "../maintenance/due-slot.js";
import { enqueueDeliveries } from "../notifications/delivery-queue.js";
import { reportFailureNotification, reportNotification } from "./evidence-mail.js";
import { reportCron, reportRange } from "./report-schedules.js";

export const REPORT_TICK_PERIOD_MS = 60_000;

type TickDeps = Pick<ServerDeps, "db" | "config" | "log">;

const nextId = createMonotonicUlids();

export async function reportTick(deps: TickDeps, now: Date): Promise<{ queued: string[] }> {
  const queued: string[] = [];
  await withAdvisoryLock(deps.db, "report-ticker", async (tx) => {
    const rows = await tx
      .select({ schedule: reportSchedules })
      .from(reportSchedules)
      .innerJoin(notificationChannels, eq(notificationChannels.id, reportSchedules.channelId))
      .where(and(eq(reportSchedules.enabled, true), eq(notificationChannels.enabled, true)));
    for (const { schedule } of rows) {
      const slot = dueSlot(reportCron(schedule), deps.config.timeZone, now, schedule.slotAt);
      if (!slot) {
        continue;
      }
      const range = reportRange(schedule.period, slot);
      const common = {
        scheduleName: schedule.name,
        recipients: schedule.recipients,
        baseUrl: deps.config.baseUrl,
        sentAt: now,
      };
      let notification: ReturnType<typeof reportNotification>;
      try {
        const query = evidenceQueryOf(
          { ...range, selector: schedule.selector, groups: schedule.groups },
          now,
        );
        const report = await evidenceReport(tx, query);
        notification = reportNotification({
          ...common,
          report,
          query,
          selector: schedule.selector,
          groups: schedule.groups,
        });
      } catch (err) {
        if (!(err instanceof RequestError)) {
          throw err;
        }
        deps.log.warn(
          { schedule_id: schedule.id, reason: err.message },
          "scheduled evidence report could not be built",
        );
        notification = reportFailureNotification({ ...common, ...range, reason: err.message });
      }
      await enqueueDeliveries(tx, [
        {
          id: nextId(now),
          channelId: schedule.channelId,
          alertId: null,
          event: "report",
          notification,
          at: now,
        },
      ]);
      await tx
        .update(reportSchedules)
        .set({ slotAt: slot, queuedAt: now })
        .where(eq(reportSchedules.id, schedule.id));
      queued.push(schedule.id);
    }
  });
  if (queued.length > 0) {
    deps.log.info({ reports: queued.length }, "scheduled evidence reports queued");
  }
  return { queued };
}

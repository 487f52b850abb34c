/**
 * @module maintenance/release-hold
 * An admin releases a deletion hold, with a reason: audited, its alert resolved. Releasing a
 * `large_forget` hold is the admin's approval of the held plan, so exactly that forget (the ids
 * the server planned then) is started on the keeper now; when it cannot start (the keeper is
 * offline, another hold still stands) the hold stays open and the admin is told why.
 */
import { deletionHolds } from "@fleetback/db";
import { and, eq, isNull } from "drizzle-orm";
import { Type } from "typebox";
import { resolveKey } from "../alerts/alerts.js";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { conflict, invalid, notFound } from "../errors.js";
import { HOLD_ALERT } from "../holds/deletion-holds.js";
import { hostNameOf } from "../hosts/host-name.js";
import type { RetentionPlanParams } from "../retention/host-retention.js";
import { dispatchHeldForget } from "./maintenance-jobs.js";

type ReleaseDeps = Pick<ServerDeps, "db" | "keys" | "log" | "hub" | "clock" | "ids" | "notifier" | "config">;

export const RELEASE_REASON_MAX = 1_000;

/** The release form and its JSON twin: why the hold may go. */
export const ReleaseHoldBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: RELEASE_REASON_MAX }) },
  { additionalProperties: false },
);

export async function releaseHold(
  deps: ReleaseDeps,
  audit: AuditContext,
  hostId: string,
  holdId: string,
  reason: string,
): Promise<{ jobId: string | null }> {
  const why = reason.trim();
  if (why === "") {
    throw invalid("reason: say why the hold may go (it is kept in the audit log)");
  }
  const now = deps.clock.now();
  const [released] = await deps.db
    .update(deletionHolds)
    .set({ releasedAt: now, releasedBy: audit.actor.userId, releaseReason: why.slice(0, RELEASE_REASON_MAX) })
    .where(
      and(eq(deletionHolds.id, holdId), eq(deletionHolds.hostId, hostId), isNull(deletionHolds.releasedAt)),
    )
    .returning();
  if (released === undefined) {
    throw notFound(`No open deletion hold ${holdId} on host ${hostId}`);
  }
  let jobId: string | null = null;
  if (released.kind === "large_forget") {
    const ids = released.details.snapshot_ids;
    const plan = released.details.retention_plan as RetentionPlanParams | undefined;
    const started = Array.isArray(ids)
      ? await dispatchHeldForget(deps, hostId, {
          snapshotIds: ids.filter((id): id is string => typeof id === "string"),
          plan: plan ?? { groups: [], remove_total: ids.length },
          forgetGroups: Array.isArray(released.details.forget_groups) ? released.details.forget_groups : [],
          userId: audit.actor.userId,
        })
      : { ok: false as const, message: "the hold keeps no plan" };
    if (!started.ok) {
      // The approval did not take: the hold stays, and nothing was forgotten.
      await deps.db
        .update(deletionHolds)
        .set({ releasedAt: null, releasedBy: null, releaseReason: null })
        .where(eq(deletionHolds.id, holdId));
      throw conflict(`hold: the held forget could not start (${started.message}); the hold stays`);
    }
    jobId = started.jobId;
  }
  await writeAudit(deps.db, deps, {
    ...audit,
    action: "host.deletion_hold.release",
    targetKind: "host",
    targetId: hostId,
    details: { hold_id: holdId, kind: released.kind, reason: why, job_id: jobId },
  });
  const resolved = await resolveKey(deps.db, { hostId, kind: HOLD_ALERT[released.kind], dedupKey: "" }, now);
  if (resolved) {
    deps.notifier.alertResolved(resolved, { hostName: await hostNameOf(deps.db, hostId) });
  }
  deps.log.info(
    { host_id: hostId, hold_id: holdId, kind: released.kind, job_id: jobId },
    "deletion hold released",
  );
  return { jobId };
}

/**
 * @module agent-channel/agent-handlers
 * One handler per agent message type. The map's type comes from the protocol's catalog, so a
 * message type added to the contract does not compile until it is handled here. Handlers are thin:
 * the work lives in the hosts and jobs modules. Messages that speak for the agent as it runs now
 * (state it replaces, not events it reports) are handled only from the host's current socket.
 */
import type { AgentMessageHandlers } from "@fleetback/protocol";
import { applyCatalogPart } from "../catalog/catalog-apply.js";
import { pruneForgottenVersions } from "../catalog/catalog-prune.js";
import { acknowledgeSchedule } from "../hosts/presence.js";
import { recordRepositorySize } from "../maintenance/repository-growth.js";
import { applyRepoStats } from "../snapshots/repo-stats.js";
import type { ReportAssembler } from "../snapshots/report-assembler.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { handleScheduleFire } from "../sources/schedule-fire.js";
import { updateFailed } from "../updates/update-alerts.js";
import { recordUpdateResult } from "../updates/update-state.js";
import type { ChannelContext } from "./channel-context.js";
import { acceptHello, HEARTBEAT_QUEUED_GRACE_MS, type HelloSession, reconcileReportedJobs } from "./hello.js";

export function createAgentHandlers(
  ctx: ChannelContext,
  session: HelloSession,
  snapshotReports: ReportAssembler,
): AgentMessageHandlers<Promise<void>> {
  const { db, log, clock, hub } = ctx.deps;
  const { hostId } = session;

  // A replaced socket's late message describes an agent the host's newer socket speaks for.
  function currentOnly<P, E>(handle: (payload: P, envelope: E) => Promise<void>) {
    return async (payload: P, envelope: E): Promise<void> => {
      if (hub.isCurrent(session.socket)) {
        await handle(payload, envelope);
      }
    };
  }

  return {
    hello: (payload) => acceptHello(ctx, session, payload),

    heartbeat: currentOnly(async (payload) => {
      const now = clock.now();
      ctx.lastSeen.touch(hostId, now);
      const reason = "agent no longer reports this job as running";
      await reconcileReportedJobs(
        ctx,
        hostId,
        payload.running_job_ids,
        now,
        reason,
        HEARTBEAT_QUEUED_GRACE_MS,
      );
    }),

    "schedule.ack": async (payload) => {
      if (!(await acknowledgeSchedule(db, hostId, payload.version))) {
        log.warn(
          { host_id: hostId, version: payload.version },
          "schedule.ack for a version never sent; ignored",
        );
      }
    },

    "schedule.fire": async (payload) => {
      await handleScheduleFire(ctx.deps, hostId, payload);
    },
    // Authoritative replacement: a replaced socket's late report must not overwrite a newer one.
    "snapshots.report": currentOnly(async (payload) => {
      // A report in parts (protocol 2) yields the whole list with its last part, and only then.
      const report = snapshotReports.accept(payload);
      if (report === undefined) {
        return;
      }
      const replaced = await replaceSnapshots(db, hostId, report);
      const pruned = replaced === undefined ? 0 : await pruneForgottenVersions(db, hostId);
      log.debug(
        { host_id: hostId, count: replaced?.count, pruned_versions: pruned },
        "snapshot list replaced",
      );
      await ctx.reports.snapshotsStored(hostId);
    }),
    "repo.stats": currentOnly(async (payload) => {
      const now = clock.now();
      const stats = await applyRepoStats(db, hostId, payload, now);
      // A check's report carries no size: the day's recorded size stays what the last one said.
      if (payload.raw_size_bytes !== undefined || payload.total_size_bytes !== undefined) {
        await recordRepositorySize(db, stats, now);
      }
    }),

    "job.started": (payload) => ctx.reports.started(hostId, payload),
    "job.progress": (payload) => ctx.reports.progress(hostId, payload),
    "log.stream": async (payload) => {
      ctx.reports.logLine(hostId, payload);
    },
    "job.finished": (payload) => ctx.reports.finished(hostId, payload),

    "tree.list.result": async (_payload, envelope) => {
      if (!hub.deliverReply(hostId, envelope)) {
        log.debug({ host_id: hostId, request_id: envelope.id }, "tree.list.result nobody waits for; dropped");
      }
    },

    // A download's frames go to the stream waiting for them (restore/download.ts), from this host only.
    "dump.chunk": async (payload, envelope) => {
      if (!hub.deliverStream(hostId, payload.request_id, envelope)) {
        log.debug(
          { host_id: hostId, request_id: payload.request_id },
          "dump.chunk nobody waits for; dropped",
        );
      }
    },
    "dump.end": async (payload, envelope) => {
      if (!hub.deliverStream(hostId, payload.request_id, envelope)) {
        log.debug({ host_id: hostId, request_id: payload.request_id }, "dump.end nobody waits for; dropped");
      }
    },

    // The answer goes to the socket the delta came from: the agent there waits for it.
    "catalog.delta": async (payload) => {
      const answer = await applyCatalogPart(db, hostId, payload);
      if (answer !== undefined) {
        log.debug(
          { host_id: hostId, tag: payload.tag, snapshot_id: payload.snapshot_id, status: answer.status },
          "catalogue delta answered",
        );
        session.answer("catalog.ack", { snapshot_id: payload.snapshot_id, tag: payload.tag, ...answer });
      }
    },

    // Only the host's current socket speaks for the agent that runs now.
    "update.result": currentOnly(async (payload) => {
      const now = clock.now();
      const recorded = await recordUpdateResult(db, hostId, payload, now);
      if (recorded && payload.status !== "restarting") {
        await updateFailed(ctx.deps, hostId, payload, now);
      }
      log.info(
        { host_id: hostId, version: payload.version, status: payload.status, error: payload.error, recorded },
        recorded ? "agent update result" : "agent update result for no current request; ignored",
      );
    }),
  };
}

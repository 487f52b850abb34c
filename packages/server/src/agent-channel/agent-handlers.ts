/**
 * @module agent-channel/agent-handlers
 * One handler per agent message type. The map's type comes from the protocol's catalog, so a
 * message type added to the contract does not compile until it is handled here. Handlers are thin:
 * the work lives in the hosts and jobs modules.
 */
import type { AgentMessageHandlers } from "@fleetback/protocol";
import { acknowledgeSchedule, touchHost } from "../hosts/presence.js";
import { reconcileRunningJobs } from "../jobs/reconcile-jobs.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { handleScheduleFire } from "../sources/schedule-fire.js";
import type { ChannelContext } from "./channel-context.js";
import { acceptHello, type HelloSession } from "./hello.js";

export function createAgentHandlers(
  ctx: ChannelContext,
  session: HelloSession,
): AgentMessageHandlers<Promise<void>> {
  const { db, log, clock, hub } = ctx.deps;
  const { hostId } = session;

  /**
   * Types this server version receives but does not act on yet. The log says so plainly: nothing
   * was stored and nothing was started.
   */
  const notActedOn = (type: string, level: "warn" | "debug", consequence: string) => async () => {
    log[level](
      { host_id: hostId, type },
      `${type} received but not acted on by this server version: ${consequence}`,
    );
  };

  return {
    hello: (payload) => acceptHello(ctx, session, payload),

    heartbeat: async (payload) => {
      // A replaced socket's late heartbeat describes an agent the host's newer socket speaks for.
      if (!hub.isCurrent(session.socket)) {
        return;
      }
      const now = clock.now();
      await touchHost(db, hostId, now);
      const reason = "agent no longer reports this job as running";
      const { lost } = await reconcileRunningJobs(db, hostId, payload.running_job_ids, now, reason);
      await ctx.reports.lost(hostId, lost, reason, now);
    },

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
    "snapshots.report": async (payload) => {
      // Authoritative replacement: a replaced socket's late report must not overwrite a newer one.
      if (!hub.isCurrent(session.socket)) {
        return;
      }
      const replaced = await replaceSnapshots(db, hostId, payload);
      log.debug({ host_id: hostId, count: replaced?.count }, "snapshot list replaced");
    },
    // A partial projection the agent sends again; nothing is lost for good.
    "repo.stats": notActedOn("repo.stats", "debug", "the repository stats were not updated"),

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
  };
}

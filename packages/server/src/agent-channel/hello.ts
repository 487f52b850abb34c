/**
 * @module agent-channel/hello
 * The hello procedure (packages/protocol/PROTOCOL.md, "The hello and its deadline" and "On hello:
 * the initial push"): validate the version; store the versions and mark the host online; make
 * this socket the host's one (evicting an older one with 4002); push, in this order and before
 * anything else can reach the agent, repository credentials, admin credentials (a protected
 * host's admin and mirror slots cleared instead, keepers/), caps and schedule.set; then reconcile running jobs, apply the auto-init rule and carry on a requested
 * agent update (confirm it, or send `command.update`), and send the backups queued while the
 * host was offline. The host's credentials are read once, for the push; auto-init decides on what
 * the push sent.
 */

import {
  CLOSE_CODES,
  ERROR_CODES,
  encode,
  type Hello,
  MIN_AGENT_PROTOCOL_VERSION,
  type PayloadOf,
  type ServerMessageType,
} from "@fleetback/protocol";
import { writeAudit } from "../audit/audit.js";
import { resolveAgentOffline } from "../freshness/health-alerts.js";
import { HOSTNAME_CHANGED_ACTION } from "../hosts/host-audit.js";
import { type HostPush, loadHostPush } from "../hosts/host-push.js";
import { type GatedSlots, gateSlots } from "../hosts/login-password-gate.js";
import { recordHello, recordRefusedHello } from "../hosts/presence.js";
import { runAutoInit } from "../jobs/auto-init.js";
import { NEVER_RECEIVED_REASON, reconcileRunningJobs } from "../jobs/reconcile-jobs.js";
import { withdrawalFrames } from "../keepers/protection-push.js";
import { dispatchOnHello } from "../sources/retry-ticker.js";
import { helpUrl } from "../updates/agent-upgrade-help.js";
import { updateSucceeded } from "../updates/update-alerts.js";
import { continueUpdateOnHello } from "../updates/update-state.js";
import type { AgentSocket } from "./agent-socket.js";
import type { ChannelContext } from "./channel-context.js";

/**
 * A queued job older than this that a reconnecting agent does not report was sent into the old
 * socket and never read; a younger one may be a command racing the new socket's registration.
 */
export const HELLO_QUEUED_GRACE_MS = 10_000;
/** Between heartbeats a command may still be in flight; after two minutes it is not. */
export const HEARTBEAT_QUEUED_GRACE_MS = 120_000;

/** Writes one of the session's own frames to its socket at once (agent-session.ts). */
export type Answer = <K extends ServerMessageType>(type: K, payload: PayloadOf<K>) => void;

export interface HelloSession {
  hostId: string;
  tokenHash: string;
  socket: AgentSocket;
  answer: Answer;
  /** Marks the session as the host's accepted one: its other messages may now be handled. */
  accept(): void;
}

/**
 * Answers ErrProtocolTooOld and closes at once; the returned promise records the refusal on the
 * host (never rejects: a failure is logged).
 */
export function rejectTooOld(
  ctx: ChannelContext,
  session: Pick<HelloSession, "hostId" | "socket" | "answer">,
  version: number,
): Promise<void> {
  const { config, log, db, clock } = ctx.deps;
  log.warn({ host_id: session.hostId, protocol_version: version }, "agent protocol too old; refused");
  session.answer("error", {
    code: ERROR_CODES.protocolTooOld,
    message: `protocol version ${version} is older than ${MIN_AGENT_PROTOCOL_VERSION}, the oldest this server accepts; upgrade the agent`,
    help_url: helpUrl(config.baseUrl),
  });
  session.socket.close(CLOSE_CODES.protocolTooOld, "protocol too old");
  return recordRefusedHello(db, session.hostId, version, clock.now()).catch((err: unknown) => {
    log.error({ err, host_id: session.hostId }, "recording the refused hello failed");
  });
}

function refuseDeleted(ctx: ChannelContext, session: HelloSession): void {
  ctx.deps.log.warn({ host_id: session.hostId }, "hello from a deleted host or a revoked token; closed");
  session.answer("error", {
    code: ERROR_CODES.hostDeleted,
    message: "this host was deleted or its agent token revoked",
  });
  session.socket.close(CLOSE_CODES.hostDeleted, "host deleted or token revoked");
}

/**
 * Frames of the initial push, in the contract's order; all encoded before any is written.
 * `credentials` are the slots this agent may receive (hosts/login-password-gate.ts).
 */
function initialPushFrames(
  push: HostPush,
  credentials: HostPush["credentials"],
  protocolVersion: number,
): string[] {
  const frames: string[] = [];
  if (credentials.repo) {
    frames.push(encode("config.update", { slot: "repo", repository: credentials.repo }));
  }
  if (push.keeperHostId === null) {
    if (credentials.admin) {
      frames.push(encode("config.update", { slot: "admin", repository: credentials.admin }));
    }
  } else {
    // A protected host: whatever an earlier push or process left in these slots goes.
    for (const update of withdrawalFrames(protocolVersion, credentials.repo)) {
      frames.push(encode("config.update", update));
    }
  }
  frames.push(encode("config.update", { caps: push.caps }));
  frames.push(encode("schedule.set", push.schedule));
  return frames;
}

/**
 * A hello naming another hostname than the last one is audited with the host as the actor: the
 * host page shows it, so an agent that takes another host's name is seen (its name stays).
 */
async function auditRename(ctx: ChannelContext, hostId: string, from: string, to: string): Promise<void> {
  await writeAudit(ctx.deps.db, ctx.deps, {
    actor: "agent",
    action: HOSTNAME_CHANGED_ACTION,
    targetKind: "host",
    targetId: hostId,
    details: { from, to },
  });
  ctx.deps.log.info({ host_id: hostId, from, to }, "agent reports another hostname");
}

export async function acceptHello(ctx: ChannelContext, session: HelloSession, hello: Hello): Promise<void> {
  const { db, log, clock, hub } = ctx.deps;
  const { hostId, socket } = session;
  if (hello.protocol_version < MIN_AGENT_PROTOCOL_VERSION) {
    await rejectTooOld(ctx, session, hello.protocol_version);
    return;
  }
  if (socket.closed) {
    return;
  }
  const now = clock.now();
  const recorded = await recordHello(db, hostId, session.tokenHash, hello, now);
  if (!recorded) {
    refuseDeleted(ctx, session);
    return;
  }
  if (recorded.renamedFrom !== undefined) {
    await auditRename(ctx, hostId, recorded.renamedFrom, hello.hostname);
  }
  // A socket that closed meanwhile must not become the host's: its close has already run.
  if (socket.closed) {
    return;
  }
  session.accept();
  hub.register(socket)?.close(CLOSE_CODES.replaced, "replaced by a newer connection");

  let push: HostPush | undefined;
  let gated: GatedSlots = { pushable: {}, withheld: [] };
  let frames: string[];
  try {
    push = await loadHostPush(ctx.deps, hostId);
    gated = gateSlots(push?.credentials ?? {}, hello.protocol_version);
    frames = push ? initialPushFrames(push, gated.pushable, hello.protocol_version) : [];
  } catch (err) {
    log.error({ err, host_id: hostId }, "initial push failed; closing so the agent reconnects");
    socket.close(1011, "internal error");
    return;
  }
  if (!push) {
    refuseDeleted(ctx, session);
    return;
  }
  socket.openGate(frames);
  for (const { slot, reason } of gated.withheld) {
    // The host page shows the same reason on the slot (hosts/slot-view.ts).
    log.warn({ host_id: hostId, slot, reason }, "credential slot not sent to the agent");
  }
  await resolveAgentOffline(ctx.deps, { id: hostId, name: recorded.name }, now);
  log.info(
    {
      host_id: hostId,
      agent_version: hello.agent_version,
      tool_version: hello.tool_version,
      protocol_version: hello.protocol_version,
    },
    "agent connected",
  );

  try {
    const reason = "agent reconnected without this job";
    await reconcileReportedJobs(ctx, hostId, hello.running_job_ids, now, reason, HELLO_QUEUED_GRACE_MS);
  } catch (err) {
    log.error({ err, host_id: hostId }, "reconciling running jobs after hello failed");
  }
  try {
    // Only credentials the agent received count: an unreadable or withheld slot was left out.
    await runAutoInit(ctx.deps, hostId, gated.pushable.repo !== undefined);
  } catch (err) {
    log.error({ err, host_id: hostId }, "repository auto-init failed");
  }
  try {
    const update = await continueUpdateOnHello(
      ctx.deps,
      hostId,
      hello,
      // This socket is the host's one here (a newer one's hello waits on this host's queue).
      (payload) => !socket.closed && hub.send(hostId, "command.update", payload),
      clock.now(),
      push.update,
    );
    if (update === "succeeded") {
      await updateSucceeded(ctx.deps, hostId, clock.now());
    }
  } catch (err) {
    log.error({ err, host_id: hostId }, "continuing the agent update failed");
  }
  try {
    // After the push: a backup needs the repository credentials the agent has just been sent.
    if (!socket.closed) {
      await dispatchOnHello(ctx.deps, hostId, clock.now());
    }
  } catch (err) {
    log.error({ err, host_id: hostId }, "sending the runs queued while offline failed");
  }
}

/**
 * Ends the host's active jobs its agent no longer runs (lost for `reason`) or never received
 * (queued longer than `queuedGraceMs`), and announces both.
 */
export async function reconcileReportedJobs(
  ctx: ChannelContext,
  hostId: string,
  runningJobIds: readonly string[],
  now: Date,
  reason: string,
  queuedGraceMs: number,
): Promise<void> {
  const { lost, neverReceived } = await reconcileRunningJobs(
    ctx.deps.db,
    hostId,
    runningJobIds,
    now,
    reason,
    new Date(now.getTime() - queuedGraceMs),
  );
  await ctx.reports.lost(hostId, lost, reason, now);
  await ctx.reports.lost(hostId, neverReceived, NEVER_RECEIVED_REASON, now);
}

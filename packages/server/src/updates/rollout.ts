/**
 * @module updates/rollout
 * An operator asks for agent `version` on some hosts or the whole fleet. Each target's request is
 * stored first (pending), then online hosts are sent `command.update` at once (sent); the others
 * get it from their next hello. Hosts already running the version are skipped, and any request of
 * theirs still waiting is withdrawn, since they already run what was asked.
 */
import { type Database, type Host, hosts, type UpdateState } from "@fleetback/db";
import { and, eq, inArray } from "drizzle-orm";
import { Type } from "typebox";
import type { BundleStore } from "../agent-artifacts/bundle-store.js";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import { RequestError } from "../errors.js";
import type { AgentHub } from "../hub/types.js";
import type { Ids } from "../ids.js";
import { formatSelector, type Selector, selectorFromRequest } from "../labels/selector.js";
import { selectorSql } from "../labels/selector-sql.js";
import type { Logger } from "../log.js";
import { buildUpdateCommand, type UpdateCommandResult } from "./update-command.js";
import { AWAITING_STATES, moveUpdateState } from "./update-state.js";

export type RolloutSelection =
  | { hostIds: string[]; all?: undefined; selector?: undefined }
  | { all: true; hostIds?: undefined; selector?: undefined }
  | { selector: Selector; hostIds?: undefined; all?: undefined };

export interface RolloutTarget {
  hostId: string;
  hostname: string;
  state: UpdateState;
  error?: string;
}

export interface RolloutSkipped {
  hostId: string;
  hostname: string;
  reason: string;
}

export interface RolloutResult {
  version: string;
  targets: RolloutTarget[];
  skipped: RolloutSkipped[];
}

export interface RolloutDeps {
  db: Database;
  hub: AgentHub;
  clock: Clock;
  ids: Ids;
  log: Logger;
  agentBundles: BundleStore;
  config: Pick<Config, "baseUrl">;
}

/** What a rollout request names, in the JSON API and the fleet page's form alike. */
export const RolloutVersion = Type.String({ minLength: 1, maxLength: 64 });
export const RolloutHostId = Type.String({ minLength: 1, maxLength: 64 });

/** Exactly one of host_ids / all / selector, as the API and the form take them. */
export function rolloutSelection(
  hostIds: string[] | undefined,
  all: boolean | undefined,
  selector?: string,
): RolloutSelection {
  if (selector !== undefined) {
    if (hostIds !== undefined || all !== undefined) {
      throw new RequestError("invalid", "selector: give host_ids, all or selector, one of them");
    }
    const parsed = selectorFromRequest(selector, "selector");
    if (parsed.length === 0) {
      throw new RequestError("invalid", "selector: is empty; to update every host, set all to true");
    }
    return { selector: parsed };
  }
  if (all === true && hostIds !== undefined) {
    throw new RequestError("invalid", "host_ids: give host_ids or all, not both");
  }
  if (all === true) {
    return { all: true };
  }
  if (hostIds === undefined || hostIds.length === 0) {
    throw new RequestError("invalid", "host_ids: name at least one host, or set all to true");
  }
  return { hostIds: [...new Set(hostIds)] };
}

async function loadTargets(db: Database, selection: RolloutSelection): Promise<Host[]> {
  if (selection.all) {
    return db.select().from(hosts);
  }
  if (selection.selector) {
    return db.select().from(hosts).where(selectorSql(hosts.labels, selection.selector));
  }
  const found = await db.select().from(hosts).where(inArray(hosts.id, selection.hostIds));
  const unknown = selection.hostIds.filter((id) => !found.some((host) => host.id === id));
  if (unknown.length > 0) {
    throw new RequestError("invalid", `host_ids: no such host: ${unknown.join(", ")}`, {
      details: [{ field: "host_ids", message: "no such host", unknown }],
    });
  }
  return found;
}

/**
 * Marks and sends the update host by host (no one transaction: each send is its own outcome), then
 * audits the rollout with the hosts it reached.
 */
export async function rollOutAgentUpdate(
  deps: RolloutDeps,
  audit: AuditContext | { actor: "system"; ip: undefined },
  version: string,
  selection: RolloutSelection,
): Promise<RolloutResult> {
  const stored = await deps.agentBundles.read(version);
  if (!stored.ok) {
    throw new RequestError(
      "invalid",
      stored.reason === "not_found"
        ? `version: this server holds no agent ${version} (GET /api/agent-versions lists the versions it holds)`
        : `version: the stored agent ${version} failed its integrity check; see the server log`,
    );
  }
  const now = deps.clock.now();
  const found = await loadTargets(deps.db, selection);
  const result: RolloutResult = { version, targets: [], skipped: [] };
  const commands = new Map<string, Promise<UpdateCommandResult>>();
  for (const host of found.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id))) {
    if (host.agentVersion === version) {
      await deps.db
        .update(hosts)
        .set({ updateVersion: null, updateState: null, updateError: null, updateStateAt: now })
        .where(and(eq(hosts.id, host.id), inArray(hosts.updateState, [...AWAITING_STATES])));
      result.skipped.push({ hostId: host.id, hostname: host.name, reason: `already runs ${version}` });
      continue;
    }
    const key = host.agentKind === "sea" ? `sea:${host.os}-${host.arch}` : "bundle";
    let pending = commands.get(key);
    if (!pending) {
      pending = buildUpdateCommand(deps, host, version);
      commands.set(key, pending);
    }
    const command = await pending;
    const error = command.ok ? null : command.error;
    await deps.db
      .update(hosts)
      .set({
        updateVersion: version,
        updateState: command.ok ? "pending" : "failed",
        updateError: error,
        updateRequestedAt: now,
        updateStateAt: now,
      })
      .where(eq(hosts.id, host.id));
    let state: UpdateState = command.ok ? "pending" : "failed";
    if (command.ok && deps.hub.send(host.id, "command.update", command.payload)) {
      // An update.result may already have moved it on; then that state stands.
      if (await moveUpdateState(deps.db, host.id, version, ["pending"], "sent", now)) {
        state = "sent";
      }
    }
    result.targets.push({
      hostId: host.id,
      hostname: host.name,
      state,
      ...(error === null ? {} : { error }),
    });
  }
  deps.log.info(
    {
      version,
      targets: result.targets.length,
      sent: result.targets.filter((target) => target.state === "sent").length,
      skipped: result.skipped.length,
    },
    "agent update rollout",
  );
  await writeAudit(deps.db, deps, {
    ...audit,
    action: "agent.update",
    targetKind: "agent_version",
    targetId: version,
    details: {
      all: selection.all === true,
      ...(selection.selector ? { selector: formatSelector(selection.selector) } : {}),
      host_ids: result.targets.map((target) => target.hostId),
      skipped: result.skipped.length,
    },
  });
  return result;
}

export function rolloutJson(result: RolloutResult) {
  return {
    version: result.version,
    targets: result.targets.map((target) => ({
      host_id: target.hostId,
      hostname: target.hostname,
      state: target.state,
      ...(target.error === undefined ? {} : { error: target.error }),
    })),
    skipped: result.skipped.map((skip) => ({
      host_id: skip.hostId,
      hostname: skip.hostname,
      reason: skip.reason,
    })),
  };
}

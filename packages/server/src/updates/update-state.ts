/**
 * @module updates/update-state
 * How far a host's requested agent update got, moved by the agent channel: a hello with the
 * requested version means it succeeded; a hello of an older agent while the request is pending
 * or sent gets the `command.update` (again); `update.result` records restarting, refused and
 * rolled_back. Every write names the version it is about, so a request replaced meanwhile by a
 * newer one is never touched by news about the old one.
 */

import { type Database, hosts, type UpdateState } from "@fleetback/db";
import type { CommandUpdate, Hello, UpdateResult } from "@fleetback/protocol";
import { and, eq, inArray, ne } from "drizzle-orm";
import type { BundleStore } from "../agent-artifacts/bundle-store.js";
import type { Config } from "../config.js";
import { HOST_UPDATE_COLUMNS, type HostUpdateRow } from "../hosts/host-push.js";
import type { Logger } from "../log.js";
import { buildUpdateCommand } from "./update-command.js";

/** States in which the host still has to be sent the command. */
export const AWAITING_STATES: readonly UpdateState[] = ["pending", "sent"];

/** From which states each reported outcome may move the request. */
const RESULT_FROM: Record<UpdateResult["status"], readonly UpdateState[]> = {
  restarting: ["pending", "sent"],
  refused: ["pending", "sent", "restarting"],
  // The new version may have said hello (succeeded) before it failed and was rolled back, and the
  // previous one's hello (failed, below) comes just before its report.
  rolled_back: ["pending", "sent", "restarting", "succeeded", "failed"],
};

/** Moves the request for `version` from one of `from` to `state`; false when it was not there. */
export async function moveUpdateState(
  db: Database,
  hostId: string,
  version: string,
  from: readonly UpdateState[],
  state: UpdateState,
  now: Date,
  error: string | null = null,
): Promise<boolean> {
  const rows = await db
    .update(hosts)
    .set({ updateState: state, updateError: error, updateStateAt: now })
    .where(and(eq(hosts.id, hostId), eq(hosts.updateVersion, version), inArray(hosts.updateState, [...from])))
    .returning({ id: hosts.id });
  return rows.length > 0;
}

export interface HelloUpdateDeps {
  db: Database;
  agentBundles: BundleStore;
  config: Pick<Config, "baseUrl">;
  log: Logger;
}

/**
 * Called once a hello is accepted and the initial push is out. `send` puts the command on the
 * host's socket and says whether it could. Answers "succeeded" when this hello completed the
 * host's requested update.
 */
export async function continueUpdateOnHello(
  deps: HelloUpdateDeps,
  hostId: string,
  hello: Pick<Hello, "agent_version">,
  send: (payload: CommandUpdate) => boolean,
  now: Date,
  /** The host's update columns as the hello's own UPDATE returned them; read here when absent. */
  known?: HostUpdateRow,
): Promise<"succeeded" | undefined> {
  const [row] =
    known !== undefined
      ? [known]
      : await deps.db.select(HOST_UPDATE_COLUMNS).from(hosts).where(eq(hosts.id, hostId)).limit(1);
  if (!row?.version || !row.state) {
    return undefined;
  }
  const { version } = row;
  if (hello.agent_version === version) {
    const moved = await deps.db
      .update(hosts)
      .set({ updateState: "succeeded", updateError: null, updateStateAt: now })
      .where(and(eq(hosts.id, hostId), eq(hosts.updateVersion, version), ne(hosts.updateState, "succeeded")))
      .returning({ id: hosts.id });
    return moved.length > 0 ? "succeeded" : undefined;
  }
  if (row.state === "restarting") {
    // The agent went to restart into `version` and another version came back: a rollback (its
    // report follows this hello and names the reason), or a start that never ran the update (a
    // reinstall, an unwritable state dir), which reports nothing. Never leave it "restarting".
    await moveUpdateState(
      deps.db,
      hostId,
      version,
      ["restarting"],
      "failed",
      now,
      `the agent restarted as ${hello.agent_version}, not ${version}`,
    );
    return undefined;
  }
  if (!AWAITING_STATES.includes(row.state)) {
    return undefined;
  }
  const command = await buildUpdateCommand(deps, row, version);
  if (!command.ok) {
    deps.log.warn({ host_id: hostId, version, error: command.error }, "agent update cannot be sent");
    await moveUpdateState(deps.db, hostId, version, AWAITING_STATES, "failed", now, command.error);
    return undefined;
  }
  if (send(command.payload)) {
    await moveUpdateState(deps.db, hostId, version, AWAITING_STATES, "sent", now);
    deps.log.info({ host_id: hostId, version, url: command.payload.url }, "command.update sent");
  }
  return undefined;
}

/** Records an `update.result`; false when it is not about the host's current request. */
export async function recordUpdateResult(
  db: Database,
  hostId: string,
  result: UpdateResult,
  now: Date,
): Promise<boolean> {
  const error = result.status === "restarting" ? null : (result.error ?? `agent reported ${result.status}`);
  return moveUpdateState(db, hostId, result.version, RESULT_FROM[result.status], result.status, now, error);
}

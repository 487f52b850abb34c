/**
 * @module updates/update-alerts
 * A failed agent update is an alert like a failed job: `agent_update_failed` (one per host, empty
 * dedup_key) opens when the agent refuses an update or rolls it back, and resolves when the host
 * says hello with the version it was asked to run. An update that cannot even be offered (no
 * artefact for the host's platform) is answered to the operator who asked, not alerted. Never
 * throws: a broken alert must not break the agent channel.
 */
import type { Database } from "@fleetback/db";
import type { UpdateResult } from "@fleetback/protocol";
import { type AlertKey, raiseAlert, resolveKey } from "../alerts/alerts.js";
import { hostNameOf } from "../hosts/host-name.js";
import type { Ids } from "../ids.js";
import type { Logger } from "../log.js";
import type { Notifier } from "../notifications/notifier-port.js";

export interface UpdateAlertDeps {
  db: Database;
  ids: Ids;
  log: Logger;
  notifier: Notifier;
}

const keyOf = (hostId: string): AlertKey => ({ hostId, kind: "agent_update_failed", dedupKey: "" });

export async function updateFailed(
  deps: UpdateAlertDeps,
  hostId: string,
  result: UpdateResult,
  now: Date,
): Promise<void> {
  try {
    const what = result.status === "rolled_back" ? "was rolled back" : "was refused";
    const message = `agent update to ${result.version} ${what}: ${result.error ?? "no reason given"}`;
    const { alert, opened } = await raiseAlert(deps, keyOf(hostId), { message }, now);
    if (opened) {
      deps.log.warn({ alert_id: alert.id, host_id: hostId, kind: alert.kind }, "alert opened");
      deps.notifier.alertOpened(alert, { hostName: await hostNameOf(deps.db, hostId) });
    }
  } catch (err) {
    deps.log.error({ err, host_id: hostId }, "could not record the alert of a failed agent update");
  }
}

export async function updateSucceeded(deps: UpdateAlertDeps, hostId: string, now: Date): Promise<void> {
  try {
    const resolved = await resolveKey(deps.db, keyOf(hostId), now);
    if (resolved) {
      deps.log.info({ alert_id: resolved.id, host_id: hostId, kind: resolved.kind }, "alert resolved");
      deps.notifier.alertResolved(resolved, { hostName: await hostNameOf(deps.db, hostId) });
    }
  } catch (err) {
    deps.log.error({ err, host_id: hostId }, "could not resolve the alert of an agent update");
  }
}

/**
 * @module retention/suspect-alert
 * `snapshot_time_suspect` (one per host, empty dedup_key): a plan of the host's retention found
 * snapshots whose claimed time lies far from the server's first sighting, which is what a host
 * steering retention with back-dated or future-dated backups looks like. Retention keeps them and
 * counts them for no rule; the alert asks a person to look. It resolves when a plan finds none.
 * Never throws: an alert must not stop the forget it accompanies.
 */
import { type AlertKey, raiseAlert, resolveKey } from "../alerts/alerts.js";
import type { ServerDeps } from "../deps.js";
import { hostNameOf } from "../hosts/host-name.js";

type AlertDeps = Pick<ServerDeps, "db" | "ids" | "log" | "notifier">;

const keyOf = (hostId: string): AlertKey => ({ hostId, kind: "snapshot_time_suspect", dedupKey: "" });
const LISTED = 3;

export async function recordSuspects(
  deps: AlertDeps,
  hostId: string,
  suspects: readonly { id: string; claimed: string; first_seen: string }[],
  now: Date,
): Promise<void> {
  try {
    if (suspects.length === 0) {
      const resolved = await resolveKey(deps.db, keyOf(hostId), now);
      if (resolved) {
        deps.notifier.alertResolved(resolved, { hostName: await hostNameOf(deps.db, hostId) });
      }
      return;
    }
    const listed = suspects
      .slice(0, LISTED)
      .map(
        (suspect) => `${suspect.id.slice(0, 8)} claims ${suspect.claimed}, first seen ${suspect.first_seen}`,
      )
      .join("; ");
    const more = suspects.length > LISTED ? ` and ${suspects.length - LISTED} more` : "";
    const message = `${suspects.length} snapshot${suspects.length === 1 ? "" : "s"} with a time far from when the server first saw ${suspects.length === 1 ? "it" : "them"} (${listed}${more}): retention keeps ${suspects.length === 1 ? "it" : "them"} and counts ${suspects.length === 1 ? "it" : "them"} for no rule. A backup dated with restic backup --time on the host looks like this.`;
    const { alert, opened } = await raiseAlert(deps, keyOf(hostId), { message }, now);
    if (opened) {
      deps.log.warn({ alert_id: alert.id, host_id: hostId, kind: alert.kind }, "alert opened");
      deps.notifier.alertOpened(alert, { hostName: await hostNameOf(deps.db, hostId) });
    }
  } catch (err) {
    deps.log.error({ err, host_id: hostId }, "could not record suspect snapshot times");
  }
}

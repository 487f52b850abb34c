/**
 * @module restore/restore-refusal
 * A restore the host refuses before restic runs is the operator's request that could not be
 * honoured, not the host failing: it opens no `restore_failed` (so the host does not count as
 * failing on the dashboard and host list), and the job page shows it as "refused" with the
 * host's sentence. The job stays `failed` in the database and on the wire: the classification
 * is read from its error, so no status vocabulary changes.
 *
 * Refused before restic ran: whatever the restore helper answers ("restore helper: …"), and the
 * agent's own refusals, which all end "; nothing was restored". Where the server can know the
 * answer in advance, the review step says it instead (inPlaceResticProblem).
 */
import { RESTORE_ORDER_PROTOCOL_VERSION } from "@fleetback/protocol";
import type { FieldProblem } from "../http/validate.js";

const HELPER_PREFIX = "restore helper:";
const AGENT_REFUSAL_SUFFIX = "; nothing was restored";

/** The sentence of a restore refused before restic ran, or undefined for any other job end. */
export function restoreRefusal(job: {
  kind: string;
  status: string;
  error: string | null | undefined;
}): string | undefined {
  if (job.kind !== "restore" || job.status !== "failed" || !job.error) {
    return undefined;
  }
  const error = job.error.trim();
  return error.startsWith(HELPER_PREFIX) || error.endsWith(AGENT_REFUSAL_SUFFIX) ? error : undefined;
}

/** [major, minor] of a reported restic version ("0.16.4", "restic 0.14.0"), undefined if unreadable. */
function majorMinor(toolVersion: string | null | undefined): [number, number] | undefined {
  const match = /(\d+)\.(\d+)/.exec(toolVersion ?? "");
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

/**
 * The review step's refusal of an in-place restore the host's restore helper would refuse: an
 * agent that hands restores to the helper (protocol 13 on) with restic older than 0.16, which
 * follows symlinks where it writes in place.
 */
export function inPlaceResticProblem(
  host: { toolVersion: string | null; protocolVersion: number | null },
  inPlace: boolean,
): FieldProblem | undefined {
  if (!inPlace || (host.protocolVersion ?? 0) < RESTORE_ORDER_PROTOCOL_VERSION) {
    return undefined;
  }
  const version = majorMinor(host.toolVersion);
  if (version === undefined || version[0] > 0 || version[1] >= 16) {
    return undefined;
  }
  return {
    field: "in_place",
    message: `this host runs restic ${host.toolVersion}, and its restore helper restores in place only with restic 0.16 or later (older restic follows symlinks where it writes); update restic on the host, or restore to a new directory`,
  };
}

/**
 * @module alerts/restore-refusal
 * A restore the host refuses before restic runs is the operator's request that could not be
 * honoured, not the host failing: it opens no `restore_failed` (so the host does not count as
 * failing on the dashboard and host list), and the job page shows it as "refused" with the
 * host's sentence. The job stays `failed` in the database and on the wire: the classification
 * is read from its error, so no status vocabulary changes.
 *
 * Refused before restic ran: whatever the restore helper answers ("restore helper: …"), and the
 * agent's own refusals, which all end "; nothing was restored". The review step cannot refuse
 * an in-place restore on restic older than 0.16 in advance: only a confined agent (one with the
 * restore helper) refuses it, and the hello does not say whether the agent is confined.
 */

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

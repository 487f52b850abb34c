/**
 * @module mirror/mirror-requests
 * What the host page's mirror forms and their JSON twins ask: bind or change the mirror's
 * credentials, remove the mirror, copy now. Each refusal names what to do about it.
 */
import { MIRROR_PROTOCOL_VERSION } from "@fleetback/protocol";
import { resolveKey } from "../alerts/alerts.js";
import type { AuditContext } from "../audit/audit.js";
import { conflict, notFound, unavailable } from "../errors.js";
import { removeMirrorCredentials } from "../hosts/credentials.js";
import { LOGIN_NEEDS_UPGRADE } from "../hosts/login-password-gate.js";
import { requireHost } from "../hosts/require-host.js";
import { type CopyDeps, copyToMirror } from "./mirror-copy.js";
import { MIRROR_UPKEEP_KINDS } from "./mirror-upkeep.js";

/** Removes the mirror; its open mirror_failed alerts go with it (there is nothing left to fail). */
export async function removeMirror(deps: CopyDeps, audit: AuditContext, hostId: string): Promise<void> {
  await requireHost(deps.db, hostId);
  if (!(await removeMirrorCredentials(deps, audit, hostId))) {
    throw notFound(`Host ${hostId} has no mirror`);
  }
  // The copy's key is empty; the upkeep's is its kind (alerts/job-alerts.ts).
  for (const dedupKey of ["", ...MIRROR_UPKEEP_KINDS]) {
    await resolveKey(deps.db, { hostId, kind: "mirror_failed", dedupKey }, deps.clock.now());
  }
}

/** An operator's "Copy now". */
export async function copyNow(deps: CopyDeps, audit: AuditContext, hostId: string) {
  await requireHost(deps.db, hostId);
  const outcome = await copyToMirror(
    deps,
    hostId,
    { kind: "user", userId: audit.actor.userId },
    { ...audit, action: "job.copy", targetKind: "job", details: { host_id: hostId } },
  );
  if (outcome.ok) {
    return outcome.job;
  }
  switch (outcome.reason) {
    case "no_mirror":
    case "mirror_credentials_missing":
      throw conflict("mirror: this host has no mirror repository; bind its credentials first");
    case "old_agent":
      throw conflict(
        `mirror: copying needs an agent of protocol ${MIRROR_PROTOCOL_VERSION} or later; update the host's agent`,
      );
    case "login_needs_agent_upgrade":
      throw conflict(`mirror: ${LOGIN_NEEDS_UPGRADE}`);
    case "no_snapshots":
      throw conflict("mirror: the repository has no snapshot of this host to copy yet");
    case "already_running":
      throw conflict(`mirror: a copy of this host is already queued or running (${outcome.jobId})`, {
        job_id: outcome.jobId,
      });
    default:
      throw unavailable("The host is offline; nothing was started.");
  }
}

/**
 * @module fleet/host-requests
 * What a host's page forms and their JSON twins both ask for: bind credentials, set bandwidth caps,
 * start a manual job. Each turns a refused change into the RequestError both answer with, so the
 * page and the API cannot drift apart on who may do what or on which status a failure gets.
 */
import { Type } from "typebox";
import type { AuditContext } from "../audit/audit.js";
import { hasRole } from "../auth/actor.js";
import type { ServerDeps } from "../deps.js";
import { forbidden, RequestError } from "../errors.js";
import { setHostBandwidth } from "../hosts/bandwidth.js";
import { type CredentialPatch, type CredentialSlot, updateHostCredentials } from "../hosts/credentials.js";
import { runAutoInit } from "../jobs/auto-init.js";
import { MANUAL_JOB_KINDS, type ManualJobKind, startManualJob } from "../maintenance/maintenance-jobs.js";
import { getHostDetail } from "./host-detail.js";

type RequestDeps = Pick<ServerDeps, "db" | "keys" | "log" | "hub" | "clock" | "ids" | "config" | "notifier">;

export const JobBody = Type.Object(
  { kind: Type.Union(MANUAL_JOB_KINDS.map((kind) => Type.Literal(kind))) },
  { additionalProperties: false },
);

export async function putCredentials(
  deps: RequestDeps,
  audit: AuditContext,
  hostId: string,
  slot: CredentialSlot,
  patch: CredentialPatch,
) {
  const result = await updateHostCredentials(deps, audit, hostId, slot, patch);
  if (!result.ok) {
    if (result.reason === "host_not_found") {
      throw new RequestError("not_found", `No host ${hostId}`);
    }
    if (result.reason === "agent_too_old") {
      throw new RequestError("conflict", `login_password: ${result.message}`);
    }
    throw new RequestError("invalid", result.errors.join("; "), { details: result.errors });
  }
  // Binding credentials to a connected host that never ran init starts it now, not at its next reconnect.
  if (slot === "repo" && deps.hub.isOnline(hostId)) {
    await runAutoInit(deps, hostId);
  }
  return result;
}

export async function putBandwidth(
  deps: RequestDeps,
  audit: AuditContext,
  hostId: string,
  upKbps: number | null,
  downKbps: number | null,
) {
  const result = await setHostBandwidth(deps, audit, hostId, { upKbps, downKbps });
  if (!result.ok) {
    if (result.reason === "host_not_found") {
      throw new RequestError("not_found", `No host ${hostId}`);
    }
    throw new RequestError("invalid", result.errors.join("; "), { details: result.errors });
  }
  return result;
}

export async function startHostJob(
  deps: RequestDeps,
  audit: AuditContext,
  hostId: string,
  kind: ManualJobKind,
) {
  if (kind === "prune" && !hasRole(audit.actor, "admin")) {
    // Prune makes what forget removed unrecoverable (before it, `restic recover` still can).
    throw forbidden("kind: prune removes forgotten data for good; only an admin may start it");
  }
  await getHostDetail(deps.db, deps.keys.secret, hostId);
  return startManualJob(deps, hostId, kind, audit);
}

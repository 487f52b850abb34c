/**
 * @module restore/diff-request
 * Which two snapshots an operator asks to compare, checked before anything is sent: both in the
 * host's cached list and not the same one. Every problem is reported by field, as for a restore.
 */
import type { Database, Job, Snapshot } from "@fleetback/db";
import { Type } from "typebox";
import type { ServerDeps } from "../deps.js";
import { unavailable } from "../errors.js";
import { requireHost } from "../hosts/require-host.js";
import type { Actor } from "../http/app-env.js";
import { type FieldProblem, invalidFrom } from "../http/validate.js";
import { startDiff } from "./restore-jobs.js";
import { findHostSnapshot } from "./restore-request.js";

/** The body of the snapshots tab's compare form and of `POST /api/hosts/:id/diff`. */
export const DiffBody = Type.Object(
  { snapshot_a: Type.String({ maxLength: 64 }), snapshot_b: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);

export interface DiffInput {
  snapshot_a: string;
  snapshot_b: string;
}

export type DiffCheck = { ok: true; a: Snapshot; b: Snapshot } | { ok: false; problems: FieldProblem[] };

export async function checkDiff(db: Database, hostId: string, input: DiffInput): Promise<DiffCheck> {
  const problems: FieldProblem[] = [];
  const found: Snapshot[] = [];
  for (const field of ["snapshot_a", "snapshot_b"] as const) {
    const id = input[field].trim();
    const snapshot = id ? await findHostSnapshot(db, hostId, id) : undefined;
    if (!snapshot) {
      problems.push({ field, message: id ? `${id} is not a snapshot of this host` : "choose a snapshot" });
    } else {
      found.push(snapshot);
    }
  }
  const [a, b] = found;
  if (a && b && a.id === b.id) {
    problems.push({ field: "snapshot_b", message: "choose a different snapshot than snapshot_a" });
  }
  if (problems.length > 0 || !a || !b) {
    return { ok: false, problems };
  }
  return { ok: true, a, b };
}

/**
 * Checks the pair and starts the diff job (audited `host.diff`): 404 for an unknown host, 400 by
 * field for a bad pair, 503 when the host is offline (nothing sent).
 */
export async function requestDiff(
  deps: Pick<ServerDeps, "db" | "keys" | "log" | "hub" | "clock" | "ids">,
  hostId: string,
  input: DiffInput,
  actor: Actor,
  ip: string | undefined,
): Promise<Job> {
  const host = await requireHost(deps.db, hostId);
  const checked = await checkDiff(deps.db, host.id, input);
  if (!checked.ok) {
    throw invalidFrom(checked.problems);
  }
  const started = await startDiff(deps, host.id, { a: checked.a.id, b: checked.b.id }, actor, ip);
  if (!started.ok) {
    throw unavailable(`${host.name} is offline; nothing was sent.`);
  }
  return started.job;
}

/**
 * @module update/boot-decision
 * What the launcher runs, decided from the boot record alone (no I/O, clock injected), so that
 * every row of the table is a plain test:
 *
 * | record                                   | runs                         | record written          |
 * |------------------------------------------|------------------------------|-------------------------|
 * | none                                     | self                         | -                       |
 * | trial, not started, artefact usable      | trial, deadline now + trial  | trial.started_at = now  |
 * | trial, not started, artefact unusable    | active / self                | failed (rolled back)    |
 * | trial, started (it never committed)      | active / self                | failed (rolled back)    |
 * | active other version, artefact usable    | active                       | -                       |
 * | active other version, artefact unusable  | self (logged)                | -                       |
 */
import { UPDATE_TRIAL_MS } from "@fleetback/protocol";
import type { ArtefactRef, BootRecord } from "./boot-record.js";
import { refOf } from "./boot-record.js";

export interface BootInput {
  record: BootRecord | undefined;
  selfVersion: string;
  now: Date;
  /** How long a version on trial has to connect; UPDATE_TRIAL_MS unless the agent's setting says otherwise. */
  trialMs?: number;
  /** Why this artefact cannot run (missing, wrong SHA-256, wrong kind), or undefined when it can. */
  problemOf(ref: ArtefactRef): string | undefined;
}

export type BootRun = { kind: "self" } | { kind: "artefact"; ref: ArtefactRef; trialDeadline?: Date };

export interface BootDecision {
  run: BootRun;
  /** Persisted before anything runs; undefined leaves the record as it is. */
  write?: BootRecord;
  /** Worth a log line each. */
  notes: string[];
}

export function rollBack(record: BootRecord, reason: string, now: Date): BootRecord {
  const { trial, ...rest } = record;
  if (trial === undefined) {
    return record;
  }
  return {
    ...rest,
    failed: { version: trial.version, sha256: trial.sha256, reason, at: now.toISOString(), reported: false },
  };
}

/** The trial becomes the active version; undefined when `version` is not on trial. */
export function commitTrial(record: BootRecord, version: string): BootRecord | undefined {
  const { trial, ...rest } = record;
  if (trial === undefined || trial.version !== version) {
    return undefined;
  }
  return { ...rest, active: refOf(trial) };
}

export function decideBoot(input: BootInput): BootDecision {
  const { now, problemOf } = input;
  const notes: string[] = [];
  let record = input.record;
  if (record === undefined) {
    return { run: { kind: "self" }, notes };
  }
  let write: BootRecord | undefined;
  const trial = record.trial;
  if (trial !== undefined) {
    const problem = problemOf(trial);
    if (trial.started_at === undefined && problem === undefined) {
      const started = { ...record, trial: { ...trial, started_at: now.toISOString() } };
      const trialDeadline = new Date(now.getTime() + (input.trialMs ?? UPDATE_TRIAL_MS));
      notes.push(`starting version ${trial.version} on trial`);
      return { run: { kind: "artefact", ref: refOf(trial), trialDeadline }, write: started, notes };
    }
    const reason =
      problem === undefined
        ? `version ${trial.version} stopped before the server accepted its first connection`
        : `version ${trial.version} could not be started: ${problem}`;
    notes.push(`rolled back: ${reason}`);
    record = rollBack(record, reason, now);
    write = record;
  }
  const active = record.active;
  if (active !== undefined && active.version !== input.selfVersion) {
    const problem = problemOf(active);
    if (problem === undefined) {
      return { run: { kind: "artefact", ref: active }, write, notes };
    }
    notes.push(
      `version ${active.version} cannot run (${problem}); running the installed ${input.selfVersion}`,
    );
  }
  return { run: { kind: "self" }, write, notes };
}

/**
 * @module update/boot-record
 * `<state>/update/boot.json`: which agent version the launcher runs. Installed launchers of older
 * versions read records written by newer agents, so this format is a contract: fields keep their
 * meaning, new fields are optional (unknown ones are ignored), and an incompatible change needs a
 * new `format`, which older launchers treat as no record (they run themselves, which is safe).
 *
 * - `active`: the committed version to run; absent = the installed launcher's own version.
 * - `trial`: a version staged by an update and not yet committed. `started_at` is set by the
 *   launcher when it first starts it; a start that finds it set again rolls back.
 * - `failed`: the last rolled-back version; `reported` once `update.result rolled_back` went out.
 * - `signature` of `active` and `trial` (optional, added later): the release signature the
 *   launcher verifies before it starts the file. A record without one makes the launcher run the
 *   installed version.
 */
import { join } from "node:path";
import { AgentKind } from "@fleetback/protocol";
import { type Static, Type } from "typebox";
import { Check } from "typebox/value";
import type { FileOps } from "./file-ops.js";

export const BOOT_RECORD_FORMAT = 1;
export const UPDATE_DIR_NAME = "update";
export const BOOT_RECORD_FILE = "boot.json";

/** Versions become file names: no separators, nothing that could climb out of the update dir. */
export const VERSION_PATTERN = "^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$";
const Timestamp = Type.String({ minLength: 1 });

export const ArtefactRef = Type.Object({
  version: Type.String({ pattern: VERSION_PATTERN }),
  /** A file name inside the update dir, never a path. */
  file: Type.String({ pattern: "^agent-[0-9A-Za-z.+_-]+$" }),
  sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }),
  kind: AgentKind,
  /**
   * Base64 Ed25519 signature by the pinned release key over the file's bytes, kept from the
   * update command so the launcher verifies what it starts on every start: the SHA-256 alone is
   * written by whoever writes this record. Optional for older records; without it the launcher
   * runs the installed version.
   */
  signature: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});
export type ArtefactRef = Static<typeof ArtefactRef>;

export const TrialEntry = Type.Object({
  ...ArtefactRef.properties,
  staged_at: Timestamp,
  started_at: Type.Optional(Timestamp),
});
export type TrialEntry = Static<typeof TrialEntry>;

export const FailedEntry = Type.Object({
  version: Type.String({ minLength: 1 }),
  sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }),
  reason: Type.String(),
  at: Timestamp,
  reported: Type.Boolean(),
});
export type FailedEntry = Static<typeof FailedEntry>;

export const BootRecord = Type.Object({
  format: Type.Literal(BOOT_RECORD_FORMAT),
  active: Type.Optional(ArtefactRef),
  trial: Type.Optional(TrialEntry),
  failed: Type.Optional(FailedEntry),
});
export type BootRecord = Static<typeof BootRecord>;

export const EMPTY_BOOT_RECORD: BootRecord = { format: BOOT_RECORD_FORMAT };

export function updateDir(stateDir: string): string {
  return join(stateDir, UPDATE_DIR_NAME);
}

export type ReadBootRecord = { ok: true; record: BootRecord | undefined } | { ok: false; problem: string };

export async function readBootRecord(fs: FileOps, path: string): Promise<ReadBootRecord> {
  let text: string | undefined;
  try {
    text = await fs.readText(path);
  } catch (cause) {
    return { ok: false, problem: `cannot read ${path}: ${String(cause)}` };
  }
  if (text === undefined) {
    return { ok: true, record: undefined };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: `${path} is not valid JSON` };
  }
  if (!Check(BootRecord, value)) {
    return { ok: false, problem: `${path} is not a boot record this version understands` };
  }
  return { ok: true, record: value };
}

export function writeBootRecord(fs: FileOps, path: string, record: BootRecord): Promise<void> {
  return fs.writeAtomic(path, `${JSON.stringify(record, null, 2)}\n`);
}

/** The artefact files a record still needs: the committed version and the one on trial. */
export function referencedFiles(record: BootRecord | undefined): Set<string> {
  const files = new Set<string>();
  if (record?.active) {
    files.add(record.active.file);
  }
  if (record?.trial) {
    files.add(record.trial.file);
  }
  return files;
}

export function refOf(entry: ArtefactRef): ArtefactRef {
  const ref: ArtefactRef = {
    version: entry.version,
    file: entry.file,
    sha256: entry.sha256,
    kind: entry.kind,
  };
  return entry.signature === undefined ? ref : { ...ref, signature: entry.signature };
}

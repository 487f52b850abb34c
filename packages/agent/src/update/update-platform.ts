/**
 * @module update/update-platform
 * The UpdatePlatform port alone, so the POSIX and Windows adapters and their users share it
 * without importing platform.ts, which picks between the adapters.
 */
import type { AgentKind } from "@fleetback/protocol";
import type { ArtefactRef, BootRecord, ReadBootRecord } from "./boot-record.js";

export interface UpdatePlatform {
  readonly name: "posix" | "windows";
  readonly dir: string;
  artefactFile(version: string, kind: AgentKind): string;
  /** Moves a verified download (a file in the update dir) to its versioned name. */
  stage(tempPath: string, ref: ArtefactRef): Promise<void>;
  /** Makes `record` (naming a staged trial) the one the next start runs. */
  activate(record: BootRecord): Promise<void>;
  /** At the launcher's start, before anything from the update dir runs. */
  prepareStart(): Promise<string[]>;
  readRecord(): Promise<ReadBootRecord>;
  /** Commit, rollback and `reported` marks: they take effect at once on every platform. */
  writeRecord(record: BootRecord): Promise<void>;
}

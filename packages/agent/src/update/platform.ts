/**
 * @module update/platform
 * What differs between Linux (and other POSIX systems) and Windows when an agent replaces
 * itself. Artefacts are versioned files in the update dir (`agent-<version>.mjs`, `agent-<version>`,
 * `agent-<version>.exe`), so no running file is ever overwritten; the platforms differ in when
 * the boot record changes and when old files may go.
 */
import type { AgentKind } from "@fleetback/protocol";
import type { ArtefactRef, BootRecord, ReadBootRecord } from "./boot-record.js";
import { createPosixPlatform } from "./posix-platform.js";
import type { PlatformOptions } from "./update-dir.js";
import { createWindowsPlatform } from "./windows-platform.js";

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

export function createUpdatePlatform(
  options: PlatformOptions,
  platform: NodeJS.Platform = process.platform,
): UpdatePlatform {
  return platform === "win32" ? createWindowsPlatform(options) : createPosixPlatform(options);
}

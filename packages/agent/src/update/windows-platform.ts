/**
 * @module update/windows-platform
 * Windows: a file that a running process holds can be neither replaced nor deleted (EBUSY/EPERM).
 * The agent that received the update is itself running from one of these files, and its parent
 * (the installed launcher that the service wrapper runs) is still waiting for it. So:
 *
 * - staging writes a new versioned file beside the running one (the same version already there
 *   and in use is reused when its SHA-256 matches);
 * - activation writes `boot.next.json`; the swap to `boot.json` happens at the next start, in
 *   the launcher, when the old child has exited (exit 75 → the service restarts the launcher);
 * - old artefacts are deleted only at a start, before any child runs; one that still refuses
 *   stays until a later start;
 * - rollback needs no file moves: the previous version's file is still there (the record names
 *   it as `active`), so rolling back is writing the record back to it.
 */
import { join } from "node:path";
import type { AgentKind } from "@fleetback/protocol";
import { type ArtefactRef, type BootRecord, writeBootRecord } from "./boot-record.js";
import { errorCode, isInUse } from "./file-ops.js";
import { type PlatformOptions, recordStore, removeUnreferenced } from "./update-dir.js";
import type { UpdatePlatform } from "./update-platform.js";

export const PENDING_RECORD_FILE = "boot.next.json";

export function createWindowsPlatform(options: PlatformOptions): UpdatePlatform {
  const { fs, dir } = options;
  const store = recordStore(options);
  const pendingPath = join(dir, PENDING_RECORD_FILE);
  return {
    name: "windows",
    dir,
    artefactFile: (version: string, kind: AgentKind) =>
      kind === "sea" ? `agent-${version}.exe` : `agent-${version}.mjs`,
    async stage(tempPath: string, ref: ArtefactRef) {
      const target = join(dir, ref.file);
      try {
        await fs.rename(tempPath, target);
      } catch (cause) {
        if (!isInUse(cause) || (await fs.sha256(target)) !== ref.sha256) {
          throw new Error(`cannot stage ${ref.file}: ${errorCode(cause) ?? String(cause)}`);
        }
        // That very artefact runs already (an earlier version on trial, say): use it as it is.
        await fs.remove(tempPath);
      }
    },
    activate: (record: BootRecord) => writeBootRecord(fs, pendingPath, record),
    async prepareStart() {
      const notes: string[] = [];
      if ((await fs.readText(pendingPath)) !== undefined) {
        try {
          await fs.rename(pendingPath, store.path);
          notes.push("applied the staged update record");
        } catch (cause) {
          notes.push(`could not apply ${PENDING_RECORD_FILE} yet: ${String(cause)}`);
        }
      }
      const read = await store.read();
      return [...notes, ...(read.ok ? await removeUnreferenced(options, read.record) : [read.problem])];
    },
    readRecord: store.read,
    writeRecord: store.write,
  };
}

/**
 * @module update/posix-platform
 * Linux and other POSIX systems: a file that a process runs can be renamed over and unlinked
 * (the process keeps its inode), so activation is one atomic rename of the boot record, done at
 * once, and files the record no longer names go right away. systemd (`Restart=always`) starts
 * the agent again after it exits with 75.
 */
import { join } from "node:path";
import type { AgentKind } from "@fleetback/protocol";
import type { ArtefactRef, BootRecord } from "./boot-record.js";
import { type PlatformOptions, recordStore, removeUnreferenced } from "./update-dir.js";
import type { UpdatePlatform } from "./update-platform.js";

export function createPosixPlatform(options: PlatformOptions): UpdatePlatform {
  const store = recordStore(options);
  return {
    name: "posix",
    dir: options.dir,
    artefactFile: (version: string, kind: AgentKind) =>
      kind === "sea" ? `agent-${version}` : `agent-${version}.mjs`,
    async stage(tempPath: string, ref: ArtefactRef) {
      // A single executable is exec'd directly; a bundle is only read by node.
      await options.fs.chmod(tempPath, ref.kind === "sea" ? 0o755 : 0o600);
      await options.fs.rename(tempPath, join(options.dir, ref.file));
    },
    async activate(record: BootRecord) {
      await store.write(record);
      await removeUnreferenced(options, record);
    },
    async prepareStart() {
      const read = await store.read();
      return read.ok ? removeUnreferenced(options, read.record) : [read.problem];
    },
    readRecord: store.read,
    writeRecord: store.write,
  };
}

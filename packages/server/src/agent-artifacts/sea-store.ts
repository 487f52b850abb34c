/**
 * @module agent-artifacts/sea-store
 * Single-executable agents (Node SEA) beside a version's bundle:
 * `<data dir>/agent-bundles/<version>/sea-<os>-<arch>/{fleetback-agent, artefact.json}` with
 * artefact.json `{os, arch, sha256, size, signature, created_at}`. Like bundles, each artefact is
 * written once (a temp directory renamed into place), signed by the release key, and re-checked
 * against its metadata and signature on every read. Serving streams the file (`openSea`): an
 * executable is ~100 MB, and a fleet-wide rollout must not hold one copy per download in memory.
 * It is checked whole once per process and file identity (inode, size, mtime); a file replaced
 * or touched afterwards is checked again, and agents check the signature themselves anyway.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { SigningKeyPair } from "@fleetback/crypto";
import type { Clock } from "../clock.js";
import { isBundleVersion } from "./bundle-version.js";
import {
  type ArtefactRead,
  addSignedFile,
  readArtefact,
  readEveryMeta,
  readMeta,
  type SignedFileInfo,
} from "./signed-file.js";

export const SEA_FILE = "fleetback-agent";
export const SEA_META_FILE = "artefact.json";

/** `process.platform` / `process.arch` shaped: lower-case letters and digits only. */
const PLATFORM_PART = /^[a-z0-9]{1,16}$/;

export interface StoredSeaInfo extends SignedFileInfo {
  os: string;
  arch: string;
}

export type ReadSeaResult = ArtefactRead<StoredSeaInfo>;

export type OpenSeaResult =
  | { ok: true; info: StoredSeaInfo; stream: ReadableStream<Uint8Array> }
  | { ok: false; reason: "not_found" }
  | { ok: false; reason: "corrupt"; problem: string };

export interface SeaArtefacts {
  /**
   * Adds a SEA for `version` (whose bundle must be stored already) unless one exists for the
   * platform; then nothing is written and the stored one is returned.
   */
  addSea(
    version: string,
    os: string,
    arch: string,
    body: Uint8Array,
    expectedSha256?: string,
  ): Promise<{ added: boolean; info: StoredSeaInfo }>;
  readSea(version: string, os: string, arch: string): Promise<ReadSeaResult>;
  /** Like readSea, but the bytes as a stream from disk once the file has been checked. */
  openSea(version: string, os: string, arch: string): Promise<OpenSeaResult>;
  /** Metadata without reading the executable (it can be large); undefined when absent or unreadable. */
  seaInfo(version: string, os: string, arch: string): Promise<StoredSeaInfo | undefined>;
  listSea(version: string): Promise<StoredSeaInfo[]>;
}

export function isPlatformPart(value: string): boolean {
  return PLATFORM_PART.test(value);
}

export function seaDirName(os: string, arch: string): string {
  return `sea-${os}-${arch}`;
}

export function createSeaArtefacts(options: {
  dir: string;
  releaseKey: SigningKeyPair;
  clock: Clock;
  hasBundle: (version: string) => Promise<boolean>;
}): SeaArtefacts {
  const { dir, releaseKey, clock, hasBundle } = options;
  const keys = { releaseKey, clock, verified: new Set<string>() };
  /** File identities whose bytes matched their metadata and signature (see the module note). */
  const checkedFiles = new Set<string>();
  const checksInFlight = new Map<
    string,
    Promise<{ ok: true; info: StoredSeaInfo } | Exclude<ReadSeaResult, { ok: true }>>
  >();
  const valid = (version: string, os: string, arch: string) =>
    isBundleVersion(version) && isPlatformPart(os) && isPlatformPart(arch);

  const readInfo = (version: string, os: string, arch: string) =>
    readMeta(join(dir, version, seaDirName(os, arch), SEA_META_FILE), ["os", "arch"], (info) =>
      info.os === os && info.arch === arch ? undefined : `${SEA_META_FILE} names another platform`,
    );

  const store: SeaArtefacts = {
    async addSea(version, os, arch, body, expectedSha256) {
      if (!valid(version, os, arch)) {
        throw new RangeError(`"${version}" ${os}-${arch} is not a valid agent version and platform`);
      }
      return addSignedFile(keys, {
        fields: { os, arch },
        body,
        expectedSha256,
        label: `agent ${version} ${os}-${arch}`,
        target: join(dir, version, seaDirName(os, arch)),
        file: SEA_FILE,
        mode: 0o755,
        metaFile: SEA_META_FILE,
        readExisting: () => readInfo(version, os, arch),
        prepare: async () => {
          if (!(await hasBundle(version))) {
            throw new Error(`agent ${version} ${os}-${arch}: store the bundle of ${version} first`);
          }
        },
      });
    },

    async readSea(version, os, arch) {
      if (!valid(version, os, arch)) {
        return { ok: false, reason: "not_found" };
      }
      const path = join(dir, version, seaDirName(os, arch), SEA_FILE);
      return readArtefact(keys, await readInfo(version, os, arch), path, SEA_META_FILE);
    },

    async openSea(version, os, arch) {
      if (!valid(version, os, arch)) {
        return { ok: false, reason: "not_found" };
      }
      const path = join(dir, version, seaDirName(os, arch), SEA_FILE);
      const identity = async () => {
        const file = await stat(path);
        return `${path}:${file.ino}:${file.size}:${file.mtimeMs}`;
      };
      const before = await identity().catch(() => undefined);
      if (before === undefined || !checkedFiles.has(before)) {
        // The first open (or one after the file changed) reads and checks it whole; concurrent
        // first opens of the same file share that one read.
        const key = before ?? path;
        let check = checksInFlight.get(key);
        if (!check) {
          check = store
            .readSea(version, os, arch)
            .then((read) => (read.ok ? { ok: true as const, info: read.info } : read));
          checksInFlight.set(key, check);
          void check.finally(() => checksInFlight.delete(key));
        }
        const checked = await check;
        if (!checked.ok) {
          return checked;
        }
        if (before === undefined || (await identity()) !== before) {
          return { ok: false, reason: "corrupt", problem: `${SEA_FILE} changed while it was checked` };
        }
        checkedFiles.add(before);
      }
      const info = await readInfo(version, os, arch);
      if (typeof info !== "object") {
        return info === "absent"
          ? { ok: false, reason: "not_found" }
          : { ok: false, reason: "corrupt", problem: info };
      }
      return { ok: true, info, stream: Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array> };
    },

    async seaInfo(version, os, arch) {
      if (!valid(version, os, arch)) {
        return undefined;
      }
      const info = await readInfo(version, os, arch);
      return typeof info === "object" ? info : undefined;
    },

    async listSea(version) {
      if (!isBundleVersion(version)) {
        return [];
      }
      const infos = await readEveryMeta(join(dir, version), (name) => {
        const match = /^sea-([a-z0-9]{1,16})-([a-z0-9]{1,16})$/.exec(name);
        return match?.[1] && match[2] ? readInfo(version, match[1], match[2]) : undefined;
      });
      return infos.sort((a, b) => `${a.os}-${a.arch}`.localeCompare(`${b.os}-${b.arch}`));
    },
  };
  return store;
}

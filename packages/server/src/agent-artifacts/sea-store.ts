/**
 * @module agent-artifacts/sea-storeNone
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
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { SigningKeyPair } from "@fleetback/crypto";
import type { Clock } from "../clock.js";
import { isBundleVersion } from "./bundle-version.js";
import {
  errorCode,
  formatMeta,
  type MetaRead,
  parseMeta,
  publishOnce,
  readMeta,
  readSignedFile,
  type SignedFileInfo,
  sha256Hex,
  signBody,
  verifiedKey,
} from "./signed-file.js";

export const SEA_FILE = "fleetback-agent";
export const SEA_META_FILE = "artefact.json";

/** `process.platform` / `process.arch` shaped: lower-case letters and digits only. */
const PLATFORM_PART = /^[a-z0-9]{1,16}$/;

export interface StoredSeaInfo extends SignedFileInfo {
  os: string;
  arch: string;
}

export type ReadSeaResult =
  | { ok: true; info: StoredSeaInfo; body: Buffer }
  | { ok: false; reason: "not_found" }
  | { ok: false; reason: "corrupt"; problem: string };

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
  const verified = new Set<string>();
  /** File identities whose bytes matched their metadata and signature (see the module note). */
  const checkedFiles = new Set<string>();
  const checksInFlight = new Map<
    string,
    Promise<{ ok: true; info: StoredSeaInfo } | Exclude<ReadSeaResult, { ok: true }>>
  >();
  const valid = (version: string, os: string, arch: string) =>
    isBundleVersion(version) && isPlatformPart(os) && isPlatformPart(arch);

  const readInfo = (version: string, os: string, arch: string): Promise<MetaRead<StoredSeaInfo>> =>
    readMeta(
      join(dir, version, seaDirName(os, arch), SEA_META_FILE),
      (text) => parseMeta(text, ["os", "arch"]),
      (info) =>
        info.os === os && info.arch === arch ? undefined : `${SEA_META_FILE} names another platform`,
    );

  const store: SeaArtefacts = {
    async addSea(version, os, arch, body, expectedSha256) {
      if (!valid(version, os, arch)) {
        throw new RangeError(`"${version}" ${os}-${arch} is not a valid agent version and platform`);
      }
      const sha256 = sha256Hex(body);
      if (expectedSha256 !== undefined && expectedSha256 !== sha256) {
        throw new Error(`agent ${version} ${os}-${arch} has SHA-256 ${sha256}; expected ${expectedSha256}`);
      }
      const existing = await readInfo(version, os, arch);
      if (typeof existing === "object") {
        return { added: false, info: existing };
      }
      if (!(await hasBundle(version))) {
        throw new Error(`agent ${version} ${os}-${arch}: store the bundle of ${version} first`);
      }
      const info: StoredSeaInfo = { os, arch, ...signBody(releaseKey, clock, body, sha256) };
      const published = await publishOnce({
        target: join(dir, version, seaDirName(os, arch)),
        file: SEA_FILE,
        mode: 0o755,
        body,
        sha256,
        metaFile: SEA_META_FILE,
        metaText: formatMeta({ os, arch }, info),
        label: `agent ${version} ${os}-${arch}`,
        readExisting: () => readInfo(version, os, arch),
      });
      if (!published.added) {
        return published;
      }
      verified.add(verifiedKey(info));
      return { added: true, info };
    },

    async readSea(version, os, arch) {
      if (!valid(version, os, arch)) {
        return { ok: false, reason: "not_found" };
      }
      const info = await readInfo(version, os, arch);
      if (info === "absent") {
        return { ok: false, reason: "not_found" };
      }
      if (typeof info === "string") {
        return { ok: false, reason: "corrupt", problem: info };
      }
      const read = await readSignedFile({
        path: join(dir, version, seaDirName(os, arch), SEA_FILE),
        metaName: SEA_META_FILE,
        info,
        publicKey: releaseKey.publicKey,
        verified,
      });
      if (!read.ok) {
        return { ok: false, reason: "corrupt", problem: read.problem };
      }
      return { ok: true, info, body: read.body };
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
      let names: string[];
      try {
        names = await readdir(join(dir, version));
      } catch (error) {
        if (errorCode(error) === "ENOENT") {
          return [];
        }
        throw error;
      }
      const infos: StoredSeaInfo[] = [];
      for (const name of names) {
        const match = /^sea-([a-z0-9]{1,16})-([a-z0-9]{1,16})$/.exec(name);
        if (!match?.[1] || !match[2]) {
          continue;
        }
        const info = await readInfo(version, match[1], match[2]);
        if (typeof info === "object") {
          infos.push(info);
        }
      }
      return infos.sort((a, b) => `${a.os}-${a.arch}`.localeCompare(`${b.os}-${b.arch}`));
    },
  };
  return store;
}

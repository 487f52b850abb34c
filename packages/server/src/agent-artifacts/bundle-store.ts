/**
 * @module agent-artifacts/bundle-storeNone
 * Agent bundles the server can hand out, one directory per version under
 * `<data dir>/agent-bundles/<version>/`: `fleetback-agent.mjs` and `bundle.json`
 * `{version, sha256, size, signature, created_at}`. The signature is Ed25519 over the bundle bytes
 * by the release key, so an agent can check an update came from its server. A version is written
 * once, as a whole directory renamed into place, and never rewritten; every read re-checks the
 * bytes against bundle.json, so a file changed on disk is refused rather than served. Single
 * executables of the same version live beside the bundle (agent-artifacts/sea-store.ts).
 */
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { SigningKeyPair } from "@fleetback/crypto";
import type { Clock } from "../clock.js";
import { isBundleVersion } from "./bundle-version.js";
import { createSeaArtefacts, type SeaArtefacts } from "./sea-store.js";
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

export const BUNDLE_FILE = "fleetback-agent.mjs";
export const BUNDLE_META_FILE = "bundle.json";

export interface StoredBundleInfo extends SignedFileInfo {
  version: string;
}

export type ReadBundleResult =
  | { ok: true; info: StoredBundleInfo; body: Buffer }
  | { ok: false; reason: "not_found" }
  | { ok: false; reason: "corrupt"; problem: string };

export type AddBundleResult = { added: boolean; info: StoredBundleInfo };

export interface BundleStore extends SeaArtefacts {
  readonly dir: string;
  /** Adds `body` as `version` unless that version is already stored (then nothing is written). */
  add(version: string, body: Uint8Array, expectedSha256?: string): Promise<AddBundleResult>;
  read(version: string): Promise<ReadBundleResult>;
  /**
   * Metadata without reading the bundle: what a `command.update` to hundreds of hosts needs. The
   * bytes are checked when they are served (and by the agent against the signature).
   */
  info(version: string): Promise<StoredBundleInfo | undefined>;
  /** Metadata of every stored version, newest first; unreadable entries are left out. */
  list(): Promise<StoredBundleInfo[]>;
}

export interface BundleStoreOptions {
  dir: string;
  releaseKey: SigningKeyPair;
  clock: Clock;
}

export function createBundleStore(options: BundleStoreOptions): BundleStore {
  const { dir, releaseKey, clock } = options;
  // Ed25519 over a megabyte costs ~0.1 s of event loop; a matching SHA-256 means the same bytes,
  // so each (bytes, signature) pair is verified once per process.
  const verified = new Set<string>();

  const readInfo = (version: string): Promise<MetaRead<StoredBundleInfo>> =>
    readMeta(
      join(dir, version, BUNDLE_META_FILE),
      (text) => parseMeta(text, ["version"]),
      (info) => (info.version === version ? undefined : `${BUNDLE_META_FILE} names another version`),
    );

  return {
    dir,
    ...createSeaArtefacts({
      dir,
      releaseKey,
      clock,
      hasBundle: async (version) => typeof (await readInfo(version)) === "object",
    }),
    async add(version, body, expectedSha256) {
      if (!isBundleVersion(version)) {
        throw new RangeError(`"${version}" is not a valid agent bundle version`);
      }
      const sha256 = sha256Hex(body);
      if (expectedSha256 !== undefined && expectedSha256 !== sha256) {
        throw new Error(`agent bundle ${version} has SHA-256 ${sha256}; expected ${expectedSha256}`);
      }
      const existing = await readInfo(version);
      if (typeof existing === "object") {
        return { added: false, info: existing };
      }
      const info: StoredBundleInfo = { version, ...signBody(releaseKey, clock, body, sha256) };
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const published = await publishOnce({
        target: join(dir, version),
        file: BUNDLE_FILE,
        mode: 0o644,
        body,
        sha256,
        metaFile: BUNDLE_META_FILE,
        metaText: formatMeta({ version }, info),
        label: `agent bundle ${version}`,
        readExisting: () => readInfo(version),
      });
      if (!published.added) {
        return published;
      }
      verified.add(verifiedKey(info));
      return { added: true, info };
    },

    async info(version) {
      if (!isBundleVersion(version)) {
        return undefined;
      }
      const info = await readInfo(version);
      return typeof info === "object" ? info : undefined;
    },
    async read(version) {
      if (!isBundleVersion(version)) {
        return { ok: false, reason: "not_found" };
      }
      const info = await readInfo(version);
      if (info === "absent") {
        return { ok: false, reason: "not_found" };
      }
      if (typeof info === "string") {
        return { ok: false, reason: "corrupt", problem: info };
      }
      const read = await readSignedFile({
        path: join(dir, version, BUNDLE_FILE),
        metaName: BUNDLE_META_FILE,
        info,
        publicKey: releaseKey.publicKey,
        verified,
      });
      if (!read.ok) {
        return { ok: false, reason: "corrupt", problem: read.problem };
      }
      return { ok: true, info, body: read.body };
    },

    async list() {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (error) {
        if (errorCode(error) === "ENOENT") {
          return [];
        }
        throw error;
      }
      const infos: StoredBundleInfo[] = [];
      for (const name of names) {
        if (!isBundleVersion(name)) {
          continue;
        }
        const info = await readInfo(name);
        if (typeof info === "object") {
          infos.push(info);
        }
      }
      return infos.sort(
        (a, b) =>
          b.createdAt.localeCompare(a.createdAt) ||
          b.version.localeCompare(a.version, "en", { numeric: true }),
      );
    },
  };
}

/**
 * @module agent-artifacts/bundle-store
 * Agent bundles the server can hand out, one directory per version under
 * `<data dir>/agent-bundles/<version>/`: `fleetback-agent.mjs` and `bundle.json`
 * `{version, sha256, size, signature, created_at}`. The signature is Ed25519 over the bundle bytes
 * by the release key, so an agent can check an update came from its server. A version is written
 * once, as a whole directory renamed into place, and never rewritten; every read re-checks the
 * bytes against bundle.json, so a file changed on disk is refused rather than served. Single
 * executables of the same version live beside the bundle (agent-artifacts/sea-store.ts).
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { SigningKeyPair } from "@fleetback/crypto";
import type { Clock } from "../clock.js";
import { isBundleVersion } from "./bundle-version.js";
import { createSeaArtefacts, type SeaArtefacts } from "./sea-store.js";
import {
  type ArtefactRead,
  addSignedFile,
  readArtefact,
  readEveryMeta,
  readMeta,
  type SignedFileInfo,
} from "./signed-file.js";

export const BUNDLE_FILE = "fleetback-agent.mjs";
export const BUNDLE_META_FILE = "bundle.json";

export interface StoredBundleInfo extends SignedFileInfo {
  version: string;
}

export type ReadBundleResult = ArtefactRead<StoredBundleInfo>;

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
  const keys = { releaseKey, clock, verified: new Set<string>() };

  const readInfo = (version: string) =>
    readMeta(join(dir, version, BUNDLE_META_FILE), ["version"], (info) =>
      info.version === version ? undefined : `${BUNDLE_META_FILE} names another version`,
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
      return addSignedFile(keys, {
        fields: { version },
        body,
        expectedSha256,
        label: `agent bundle ${version}`,
        target: join(dir, version),
        file: BUNDLE_FILE,
        mode: 0o644,
        metaFile: BUNDLE_META_FILE,
        readExisting: () => readInfo(version),
        prepare: () => mkdir(dir, { recursive: true, mode: 0o700 }),
      });
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
      return readArtefact(keys, await readInfo(version), join(dir, version, BUNDLE_FILE), BUNDLE_META_FILE);
    },

    async list() {
      const infos = await readEveryMeta(dir, (name) => (isBundleVersion(name) ? readInfo(name) : undefined));
      return infos.sort(
        (a, b) =>
          b.createdAt.localeCompare(a.createdAt) ||
          b.version.localeCompare(a.version, "en", { numeric: true }),
      );
    },
  };
}

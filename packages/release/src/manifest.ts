/**
 * @module manifest
 * `manifest.json` of a release dir: the version and each artefact beside it with its SHA-256, as
 * the server's `import-release` reads it. It is written last and atomically, so that an import
 * running meanwhile sees either the previous manifest or one whose files are all in place.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

export const MANIFEST_FILE = "manifest.json";

export interface BundleArtefact {
  kind: "bundle";
  file: string;
  sha256: string;
}

export interface SeaArtefact {
  kind: "sea";
  /** `process.platform` of the executable: linux, win32, darwin. */
  os: string;
  /** `process.arch` of the executable: x64, arm64. */
  arch: string;
  file: string;
  sha256: string;
}

export type ReleaseArtefact = BundleArtefact | SeaArtefact;

export interface ReleaseManifest {
  version: string;
  artefacts: ReleaseArtefact[];
}

/** Lowercase hex SHA-256 of a file, streamed: a SEA is a hundred megabytes. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk);
  }
  return hash.digest("hex");
}

/** Writes `manifest.json` into `dir` (temp file + rename); returns its path. */
export async function writeManifest(dir: string, manifest: ReleaseManifest): Promise<string> {
  const path = join(dir, MANIFEST_FILE);
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(temp, path);
  return path;
}

/**
 * @module agent-artifacts/release-import
 * Imports a release directory written by `pnpm release` into the artefact store: `manifest.json`
 * `{version, artefacts: [{kind: "bundle", file, sha256} | {kind: "sea", os, arch, file, sha256}]}`
 * with the files beside it. Every file must hash to its manifest entry and the bundle's banner
 * must name the manifest's version. Re-importing the same release writes nothing; a version that
 * is stored with other bytes is refused, since a stored version is never rewritten.
 */
import { readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { type Static, Type } from "typebox";
import { describeProblems } from "../http/validate.js";
import { bannerVersion } from "./agent-bundle.js";
import type { BundleStore } from "./bundle-store.js";
import { isBundleVersion } from "./bundle-version.js";
import { isPlatformPart } from "./sea-store.js";
import { sha256Hex } from "./signed-file.js";

export const MANIFEST_FILE = "manifest.json";

const Sha256 = Type.String({ pattern: "^[0-9a-f]{64}$" });
const FileName = Type.String({ minLength: 1, maxLength: 255 });
const Manifest = Type.Object({
  version: Type.String({ minLength: 1, maxLength: 64 }),
  artefacts: Type.Array(
    Type.Union([
      Type.Object({ kind: Type.Literal("bundle"), file: FileName, sha256: Sha256 }),
      Type.Object({
        kind: Type.Literal("sea"),
        os: Type.String({ minLength: 1, maxLength: 16 }),
        arch: Type.String({ minLength: 1, maxLength: 16 }),
        file: FileName,
        sha256: Sha256,
      }),
    ]),
    { minItems: 1, maxItems: 64 },
  ),
});
type Manifest = Static<typeof Manifest>;

export interface ImportedArtefact {
  version: string;
  /** "bundle" or the SEA's `<os>-<arch>`. */
  artefact: string;
  sha256: string;
  added: boolean;
}

/** The release cannot be imported; the message names the file and what is wrong. */
export class ReleaseImportError extends Error {
  override readonly name = "ReleaseImportError";
}

async function readManifest(dir: string): Promise<Manifest> {
  const path = join(dir, MANIFEST_FILE);
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    throw new ReleaseImportError(`${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const problems = describeProblems(Manifest, value);
  if (problems.length > 0) {
    throw new ReleaseImportError(
      `${path}: ${problems.map((problem) => `${problem.field}: ${problem.message}`).join("; ")}`,
    );
  }
  return value as Manifest;
}

async function readArtefact(dir: string, file: string, sha256: string) {
  if (basename(file) !== file || file.startsWith(".")) {
    throw new ReleaseImportError(`${MANIFEST_FILE}: file "${file}" must be a plain name beside the manifest`);
  }
  let body: Buffer;
  try {
    body = await readFile(join(dir, file));
  } catch (error) {
    throw new ReleaseImportError(
      `${join(dir, file)}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const actual = sha256Hex(body);
  if (actual !== sha256) {
    throw new ReleaseImportError(
      `${join(dir, file)} has SHA-256 ${actual}; ${MANIFEST_FILE} says ${sha256} (incomplete copy or tampered file)`,
    );
  }
  return body;
}

function refuseRewrite(version: string, artefact: string, stored: string, offered: string): never {
  throw new ReleaseImportError(
    `agent ${version} ${artefact} is already stored with SHA-256 ${stored}, not ${offered}; a stored version is never rewritten (release it under a new version)`,
  );
}

/** Checks the whole release before storing anything, then stores the bundle first and the SEAs after. */
export async function importRelease(store: BundleStore, dir: string): Promise<ImportedArtefact[]> {
  const manifest = await readManifest(dir);
  const { version } = manifest;
  if (!isBundleVersion(version)) {
    throw new ReleaseImportError(`${MANIFEST_FILE}: version "${version}" is not a version name`);
  }
  const bundles = manifest.artefacts.filter((artefact) => artefact.kind === "bundle");
  if (bundles.length > 1) {
    throw new ReleaseImportError(`${MANIFEST_FILE}: more than one bundle artefact`);
  }
  const bodies = new Map<(typeof manifest.artefacts)[number], Buffer>();
  for (const artefact of manifest.artefacts) {
    if (artefact.kind === "sea" && !(isPlatformPart(artefact.os) && isPlatformPart(artefact.arch))) {
      throw new ReleaseImportError(
        `${MANIFEST_FILE}: sea ${artefact.os}-${artefact.arch} is not a process.platform-process.arch pair`,
      );
    }
    const body = await readArtefact(dir, artefact.file, artefact.sha256);
    if (artefact.kind === "bundle") {
      const banner = bannerVersion(body);
      if (banner !== version) {
        throw new ReleaseImportError(
          `${join(dir, artefact.file)}: its banner says ${banner === undefined ? "nothing (no `// fleetback-agent <version>` first line)" : `version ${banner}`}, the manifest says ${version}`,
        );
      }
    }
    bodies.set(artefact, body);
  }
  const imported: ImportedArtefact[] = [];
  const ordered = [...bundles, ...manifest.artefacts.filter((artefact) => artefact.kind === "sea")];
  for (const artefact of ordered) {
    const body = bodies.get(artefact) ?? Buffer.alloc(0);
    if (artefact.kind === "bundle") {
      const result = await store.add(version, body);
      if (result.info.sha256 !== artefact.sha256) {
        refuseRewrite(version, "bundle", result.info.sha256, artefact.sha256);
      }
      imported.push({ version, artefact: "bundle", sha256: artefact.sha256, added: result.added });
    } else {
      const name = `${artefact.os}-${artefact.arch}`;
      let result: Awaited<ReturnType<BundleStore["addSea"]>>;
      try {
        result = await store.addSea(version, artefact.os, artefact.arch, body);
      } catch (error) {
        throw new ReleaseImportError(error instanceof Error ? error.message : String(error));
      }
      if (result.info.sha256 !== artefact.sha256) {
        refuseRewrite(version, name, result.info.sha256, artefact.sha256);
      }
      imported.push({ version, artefact: name, sha256: artefact.sha256, added: result.added });
    }
  }
  return imported;
}

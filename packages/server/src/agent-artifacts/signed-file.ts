/**
 * @module agent-artifacts/signed-file
 * What the bundle and single-executable stores share: an artefact file beside a JSON metadata
 * file holding `{..., sha256, size, signature, created_at}`, signed by the release key (Ed25519),
 * published once as a whole directory renamed into place, and checked against its metadata on
 * every read. Ed25519 over a large file costs real event-loop time, so a (SHA-256, signature)
 * pair that verified once is not verified again in this process: a matching SHA-256 means the
 * same bytes.
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { type SigningKeyPair, sign, verifySignature } from "@fleetback/crypto";
import type { Clock } from "../clock.js";

export interface SignedFileInfo {
  sha256: string;
  size: number;
  /** Base64 Ed25519 signature of the file's bytes by the release key. */
  signature: string;
  createdAt: string;
}

/** What a metadata file read gives: the metadata, "absent", or why it cannot be used. */
export type MetaRead<T> = T | "absent" | string;

export type SignedFileRead = { ok: true; body: Buffer } | { ok: false; problem: string };

/** What reading a stored artefact gives its caller: the bytes, or why there are none. */
export type ArtefactRead<T> =
  | { ok: true; info: T; body: Buffer }
  | { ok: false; reason: "not_found" }
  | { ok: false; reason: "corrupt"; problem: string };

/** The release key and the per-store record of (SHA-256, signature) pairs already verified. */
export interface SignedFileKeys {
  releaseKey: SigningKeyPair;
  clock: Clock;
  verified: Set<string>;
}

export function sha256Hex(body: Uint8Array): string {
  return createHash("sha256").update(body).digest("hex");
}

export function signBody(
  releaseKey: SigningKeyPair,
  clock: Clock,
  body: Uint8Array,
  sha256 = sha256Hex(body),
): SignedFileInfo {
  return {
    sha256,
    size: body.byteLength,
    signature: Buffer.from(sign(releaseKey.secretKey, body)).toString("base64"),
    createdAt: clock.now().toISOString(),
  };
}

/** The metadata file's text: `fields` (what names the artefact) first, then the signed facts. */
export function formatMeta(fields: Record<string, string>, info: SignedFileInfo): string {
  const record = {
    ...fields,
    sha256: info.sha256,
    size: info.size,
    signature: info.signature,
    created_at: info.createdAt,
  };
  return `${JSON.stringify(record, null, 2)}\n`;
}

/**
 * Parses a metadata file: `names` are the string fields that name the artefact (version, or os
 * and arch); undefined when anything is missing or mistyped.
 */
export function parseMeta<K extends string>(
  text: string,
  names: readonly K[],
): (Record<K, string> & SignedFileInfo) | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) {
    return undefined;
  }
  const record = value as Record<string, unknown>;
  const { sha256, size, signature, created_at } = record;
  if (
    typeof sha256 !== "string" ||
    !/^[0-9a-f]{64}$/.test(sha256) ||
    typeof size !== "number" ||
    !Number.isSafeInteger(size) ||
    typeof signature !== "string" ||
    typeof created_at !== "string"
  ) {
    return undefined;
  }
  const named: Partial<Record<K, string>> = {};
  for (const name of names) {
    const field = record[name];
    if (typeof field !== "string") {
      return undefined;
    }
    named[name] = field;
  }
  return { ...(named as Record<K, string>), sha256, size, signature, createdAt: created_at };
}

/**
 * Reads and parses a metadata file whose string fields `names` name the artefact; `check` refuses
 * metadata that names another artefact.
 */
export async function readMeta<K extends string>(
  path: string,
  names: readonly K[],
  check: (info: Record<K, string> & SignedFileInfo) => string | undefined,
): Promise<MetaRead<Record<K, string> & SignedFileInfo>> {
  const name = basename(path);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    return errorCode(error) === "ENOENT" ? "absent" : `cannot read ${name}: ${describeError(error)}`;
  }
  const info = parseMeta(text, names);
  if (info === undefined) {
    return `${name} is malformed`;
  }
  return check(info) ?? info;
}

/**
 * Writes `file` and its metadata into a temporary sibling of `target`, checks what reached the
 * disk is what was signed, then renames it into place. When another writer published `target`
 * first, theirs stays and is returned (through `readExisting`).
 */
export async function publishOnce<T>(options: {
  target: string;
  file: string;
  mode: number;
  body: Uint8Array;
  sha256: string;
  metaFile: string;
  metaText: string;
  /** Names the artefact in errors. */
  label: string;
  readExisting: () => Promise<MetaRead<T>>;
}): Promise<{ added: true } | { added: false; info: T }> {
  const { target, file, sha256 } = options;
  const temp = join(target, "..", `.${basename(target)}.${randomUUID()}.tmp`);
  try {
    await mkdir(temp, { mode: 0o700 });
    await writeFile(join(temp, file), options.body, { mode: options.mode });
    await writeFile(join(temp, options.metaFile), options.metaText);
    const written = sha256Hex(await readFile(join(temp, file)));
    if (written !== sha256) {
      throw new Error(`${options.label} read back with SHA-256 ${written}; expected ${sha256}`);
    }
    try {
      await rename(temp, target);
    } catch (error) {
      const code = errorCode(error);
      if (code === "ENOTEMPTY" || code === "EEXIST") {
        const winner = await options.readExisting();
        if (typeof winner === "object" && winner !== null) {
          return { added: false, info: winner };
        }
      }
      throw error;
    }
    return { added: true };
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/**
 * Adds an artefact named by `fields` unless `readExisting` finds one already stored (then nothing
 * is written and that one is returned). `prepare` runs only when the artefact is to be written.
 */
export async function addSignedFile<F extends Record<string, string>>(
  keys: SignedFileKeys,
  options: {
    fields: F;
    body: Uint8Array;
    expectedSha256: string | undefined;
    /** Names the artefact in errors. */
    label: string;
    target: string;
    file: string;
    mode: number;
    metaFile: string;
    readExisting: () => Promise<MetaRead<F & SignedFileInfo>>;
    prepare: () => Promise<unknown>;
  },
): Promise<{ added: boolean; info: F & SignedFileInfo }> {
  const { body, label } = options;
  const sha256 = sha256Hex(body);
  if (options.expectedSha256 !== undefined && options.expectedSha256 !== sha256) {
    throw new Error(`${label} has SHA-256 ${sha256}; expected ${options.expectedSha256}`);
  }
  const existing = await options.readExisting();
  if (typeof existing === "object") {
    return { added: false, info: existing };
  }
  await options.prepare();
  const info = { ...options.fields, ...signBody(keys.releaseKey, keys.clock, body, sha256) };
  const published = await publishOnce({
    target: options.target,
    file: options.file,
    mode: options.mode,
    body,
    sha256,
    metaFile: options.metaFile,
    metaText: formatMeta(options.fields, info),
    label,
    readExisting: options.readExisting,
  });
  if (!published.added) {
    return published;
  }
  keys.verified.add(verifiedKey(info));
  return { added: true, info };
}

/** Reads the artefact at `path` described by `meta`, checked against it and its signature. */
export async function readArtefact<T extends SignedFileInfo>(
  keys: SignedFileKeys,
  meta: MetaRead<T>,
  path: string,
  metaName: string,
): Promise<ArtefactRead<T>> {
  if (meta === "absent") {
    return { ok: false, reason: "not_found" };
  }
  if (typeof meta === "string") {
    return { ok: false, reason: "corrupt", problem: meta };
  }
  const read = await readSignedFile({
    path,
    metaName,
    info: meta,
    publicKey: keys.releaseKey.publicKey,
    verified: keys.verified,
  });
  if (!read.ok) {
    return { ok: false, reason: "corrupt", problem: read.problem };
  }
  return { ok: true, info: meta, body: read.body };
}

/**
 * The readable metadata of the entries in `dir` (none when it does not exist yet); `read` gives
 * undefined for a name that is no artefact, and unreadable metadata is left out.
 */
export async function readEveryMeta<T>(
  dir: string,
  read: (name: string) => Promise<MetaRead<T>> | undefined,
): Promise<T[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (errorCode(error) === "ENOENT") {
      return [];
    }
    throw error;
  }
  const infos: T[] = [];
  for (const name of names) {
    const info = await read(name);
    if (typeof info === "object") {
      infos.push(info);
    }
  }
  return infos;
}

export async function readSignedFile(options: {
  path: string;
  /** Names the metadata file in problems. */
  metaName: string;
  info: SignedFileInfo;
  publicKey: Uint8Array;
  /** `sha256:signature` pairs already verified. */
  verified: Set<string>;
}): Promise<SignedFileRead> {
  const { path, info } = options;
  const name = basename(path);
  let body: Buffer;
  try {
    body = await readFile(path);
  } catch (error) {
    return { ok: false, problem: `cannot read ${name}: ${describeError(error)}` };
  }
  const sha256 = sha256Hex(body);
  if (sha256 !== info.sha256 || body.byteLength !== info.size) {
    return {
      ok: false,
      problem: `${name} has SHA-256 ${sha256} (${body.byteLength} bytes); ${options.metaName} says ${info.sha256} (${info.size} bytes)`,
    };
  }
  const key = verifiedKey(info);
  if (!options.verified.has(key)) {
    if (!verifySignature(options.publicKey, body, Buffer.from(info.signature, "base64"))) {
      return { ok: false, problem: "signature does not verify with the current release key" };
    }
    options.verified.add(key);
  }
  return { ok: true, body };
}

export function verifiedKey(info: SignedFileInfo): string {
  return `${info.sha256}:${info.signature}`;
}

export function errorCode(error: unknown): string | undefined {
  return error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

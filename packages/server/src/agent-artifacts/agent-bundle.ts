/**
 * @module agent-artifacts/agent-bundle
 * The agent bundle this server release ships (built by @fleetback/agent into one file), with
 * its version and SHA-256: the installer embeds the hash, so a download is verified before it
 * is installed.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { AddBundleResult, BundleStore } from "./bundle-store.js";

export interface AgentBundle {
  version: string;
  sha256: string;
  body: Buffer;
}

const require = createRequire(import.meta.url);

const BANNER = /^\/\/ fleetback-agent ([^\s]{1,64})\r?\n/;

/** The version named by a bundle's first line, `// fleetback-agent <version>`, if it has one. */
export function bannerVersion(body: Uint8Array): string | undefined {
  const head = Buffer.from(body.subarray(0, 128)).toString("utf8");
  return BANNER.exec(head)?.[1];
}

/**
 * The banner names the bundle's version; a bundle built before banners existed takes the agent
 * package's version instead (only the shipped bundle may lack one: imported releases must have it).
 */
export async function loadAgentBundle(): Promise<AgentBundle> {
  const body = await readFile(require.resolve("@fleetback/agent/bundle"));
  let version = bannerVersion(body);
  if (version === undefined) {
    const manifest = JSON.parse(await readFile(require.resolve("@fleetback/agent/package.json"), "utf8")) as {
      version: string;
    };
    version = manifest.version;
  }
  return { version, sha256: createHash("sha256").update(body).digest("hex"), body };
}

/** Loads once, on first use, and keeps the result (or the failure) for the process lifetime. */
export function createBundleSource(
  load: () => Promise<AgentBundle> = loadAgentBundle,
): () => Promise<AgentBundle> {
  let loading: Promise<AgentBundle> | undefined;
  return () => {
    loading ??= load();
    return loading;
  };
}

/** Puts the shipped bundle into the store unless its version is there already (never rewritten). */
export async function importShippedBundle(
  store: BundleStore,
  load: () => Promise<AgentBundle> = loadAgentBundle,
): Promise<AddBundleResult> {
  const bundle = await load();
  return store.add(bundle.version, bundle.body, bundle.sha256);
}

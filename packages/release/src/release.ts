/**
 * @module release
 * A release dir: the agent bundle, the single-executable agent for this platform and
 * `manifest.json` naming both with their SHA-256, ready for the server's `import-release`.
 */
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { findAgentPackage, isReleaseVersion } from "./agent-package.js";
import { writeBundleArtefact } from "./bundle-artefact.js";
import { type ReleaseArtefact, type ReleaseManifest, writeManifest } from "./manifest.js";
import { writeSeaArtefact } from "./sea-executable.js";

export interface ReleaseOptions {
  /** Created if missing; files of the same names are replaced. */
  outDir: string;
  /** Default: the agent package's version (FLEETBACK_AGENT_VERSION is the CLI's business). */
  version?: string;
  /** The agent package directory; default the workspace's `@fleetback/agent`. */
  agentDir?: string;
  /** Build the single-executable agent too (default true; it takes seconds and ~100 MB). */
  sea?: boolean;
  /** Node binary the SEA is made from; default the running node. */
  nodeBinary?: string;
  /** Progress lines; default none. */
  log?: (line: string) => void;
}

export interface Release {
  /** Absolute path of the release dir. */
  dir: string;
  manifest: ReleaseManifest;
}

export async function buildRelease(options: ReleaseOptions): Promise<Release> {
  const log = options.log ?? (() => {});
  const agent = await findAgentPackage(options.agentDir);
  const agentDir = agent.dir;
  const version = options.version ?? agent.version;
  if (!isReleaseVersion(version)) {
    throw new RangeError(`release version ${JSON.stringify(version)} is not a plain version`);
  }
  const dir = resolve(options.outDir);
  await mkdir(dir, { recursive: true });
  const artefacts: ReleaseArtefact[] = [];

  const bundle = await writeBundleArtefact({
    agentDir,
    version,
    outDir: dir,
    nodeBinary: options.nodeBinary,
  });
  log(`bundle ${bundle.file} sha256 ${bundle.sha256}`);
  artefacts.push(bundle);

  if (options.sea ?? true) {
    const started = Date.now();
    const sea = await writeSeaArtefact({ agentDir, version, outDir: dir, nodeBinary: options.nodeBinary });
    log(`sea ${sea.file} sha256 ${sea.sha256} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    artefacts.push(sea);
  }

  const manifest: ReleaseManifest = { version, artefacts };
  log(`manifest ${await writeManifest(dir, manifest)}`);
  return { dir, manifest };
}

/**
 * @module bundle-artefact
 * The agent bundle of a release, `fleetback-agent-<version>.mjs`. The bundle turbo just built
 * (`dist/bundle/fleetback-agent.mjs`) is copied when its banner names the release version;
 * otherwise (FLEETBACK_AGENT_VERSION set, or a stale build) the agent's own bundle script builds
 * one for that version, so that the banner, which the server checks on import, always matches.
 */
import { chmod, copyFile, open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { type BundleArtefact, sha256File } from "./manifest.js";
import { runTool } from "./run-tool.js";

export interface BundleArtefactOptions {
  /** The agent package directory. */
  agentDir: string;
  version: string;
  outDir: string;
  /** Node that runs the agent's bundle script; default the running one. */
  nodeBinary?: string;
}

export const bundleFileName = (version: string) => `fleetback-agent-${version}.mjs`;

/** The version of `// fleetback-agent <version>`, the first line of a bundle; null without it. */
export async function readBannerVersion(path: string): Promise<string | null> {
  const file = await open(path).catch(() => null);
  if (!file) {
    return null;
  }
  try {
    const { buffer, bytesRead } = await file.read({ buffer: Buffer.alloc(200), position: 0 });
    const firstLine = buffer.subarray(0, bytesRead).toString("utf8").split("\n", 1)[0] ?? "";
    return /^\/\/ fleetback-agent (\S+)$/.exec(firstLine)?.[1] ?? null;
  } finally {
    await file.close();
  }
}

export async function writeBundleArtefact(options: BundleArtefactOptions): Promise<BundleArtefact> {
  const file = bundleFileName(options.version);
  const temp = join(options.outDir, `.${file}.${process.pid}.tmp`);
  const built = join(options.agentDir, "dist", "bundle", "fleetback-agent.mjs");
  try {
    if ((await readBannerVersion(built)) === options.version) {
      await copyFile(built, temp);
    } else {
      await runTool(
        options.nodeBinary ?? process.execPath,
        [join(options.agentDir, "scripts", "bundle.mjs"), "--outfile", temp],
        { env: { ...process.env, FLEETBACK_AGENT_VERSION: options.version } },
      );
    }
    const banner = await readBannerVersion(temp);
    if (banner !== options.version) {
      throw new Error(
        `the agent bundle's first line names version ${banner ?? "(none)"}, expected "// fleetback-agent ${options.version}"`,
      );
    }
    await chmod(temp, 0o644);
    const sha256 = await sha256File(temp);
    await rename(temp, join(options.outDir, file));
    return { kind: "bundle", file, sha256 };
  } finally {
    await rm(temp, { force: true });
  }
}

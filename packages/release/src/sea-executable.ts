/**
 * @module sea-executable
 * The single-executable agent for hosts without Node.js >= 20, per the Node 20 SEA recipe: the
 * agent CLI as one CommonJS script, a preparation blob made by `node --experimental-sea-config`,
 * and that blob injected with postject into a copy of the very node binary that made it (a blob
 * only fits the node version that wrote it). The executable is for that binary's platform, by
 * default the running node's: a release built on Linux x64 carries a linux-x64 SEA.
 */
import { chmod, copyFile, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { type SeaArtefact, sha256File } from "./manifest.js";
import { runTool } from "./run-tool.js";
import { buildSeaScript } from "./sea-script.js";

/** The fuse Node's SEA support looks for; postject flips it when it injects the blob. */
export const SEA_SENTINEL_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
const SEA_RESOURCE = "NODE_SEA_BLOB";

export interface SeaExecutableOptions {
  /** The agent package directory (its `dist/cli.js` is bundled). */
  agentDir: string;
  version: string;
  outDir: string;
  /** The node binary to copy, runnable here; default the running node. */
  nodeBinary?: string;
}

export interface SeaTarget {
  os: string;
  arch: string;
}

export const seaFileName = (version: string, target: SeaTarget) =>
  `fleetback-agent-${version}-${target.os}-${target.arch}${target.os === "win32" ? ".exe" : ""}`;

async function targetOf(nodeBinary: string): Promise<SeaTarget> {
  const { stdout } = await runTool(nodeBinary, ["-p", "process.platform + ' ' + process.arch"]);
  const [os = "", arch = ""] = stdout.trim().split(" ");
  return { os, arch };
}

/** macOS refuses a modified signed binary: drop the signature before, sign ad hoc after. */
async function codesign(target: SeaTarget, exe: string, step: "before" | "after"): Promise<void> {
  if (target.os === "darwin") {
    await runTool("codesign", step === "before" ? ["--remove-signature", exe] : ["--sign", "-", exe]);
  }
}

async function inject(exe: string, blob: string, target: SeaTarget): Promise<void> {
  const postject = createRequire(import.meta.url).resolve("postject/dist/cli.js");
  const args = [postject, exe, SEA_RESOURCE, blob, "--sentinel-fuse", SEA_SENTINEL_FUSE];
  if (target.os === "darwin") {
    args.push("--macho-segment-name", "NODE_SEA");
  }
  await runTool(process.execPath, args).catch((cause: unknown) => {
    throw new Error(
      "postject could not inject the agent; a node built without single-executable support (some distribution packages) lacks the SEA fuse",
      { cause },
    );
  });
}

/** Builds the SEA into `outDir`, checks that it answers `--version` with its version. */
export async function writeSeaArtefact(options: SeaExecutableOptions): Promise<SeaArtefact> {
  const nodeBinary = options.nodeBinary ?? process.execPath;
  const target = await targetOf(nodeBinary);
  const file = seaFileName(options.version, target);
  // Inside outDir, so that the finished executable is renamed into place, never half-written.
  const work = await mkdtemp(join(options.outDir, ".sea-"));
  try {
    const script = join(work, "fleetback-agent.cjs");
    const blob = join(work, "fleetback-agent.blob");
    const config = join(work, "sea-config.json");
    const exe = join(work, file);
    await buildSeaScript({
      entry: join(options.agentDir, "dist", "cli.js"),
      outfile: script,
      version: options.version,
    });
    await writeFile(
      config,
      JSON.stringify({ main: script, output: blob, disableExperimentalSEAWarning: true }),
    );
    await runTool(nodeBinary, ["--experimental-sea-config", config], { cwd: work });
    await copyFile(nodeBinary, exe);
    await chmod(exe, 0o755);
    await codesign(target, exe, "before");
    await inject(exe, blob, target);
    await codesign(target, exe, "after");
    const { stdout } = await runTool(exe, ["--version"]);
    if (stdout.trim() !== options.version) {
      throw new Error(
        `the built SEA answers --version with ${JSON.stringify(stdout.trim())}, expected ${options.version}`,
      );
    }
    const sha256 = await sha256File(exe);
    await rename(exe, join(options.outDir, file));
    return { kind: "sea", os: target.os, arch: target.arch, file, sha256 };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

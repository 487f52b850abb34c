#!/usr/bin/env node
/**
 * @module cli
 * `pnpm release`: builds the agent bundle and this platform's single-executable agent into a
 * release dir (default `<repo>/release/`) that the server imports.
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { findAgentPackage, releaseVersion } from "./agent-package.js";
import { buildRelease } from "./release.js";

const USAGE = `Usage: pnpm release [--out DIR] [--no-sea]

Writes into DIR (default <repo>/release/):
  fleetback-agent-<version>.mjs                  the agent bundle (run with node >= 20)
  fleetback-agent-<version>-<os>-<arch>[.exe]    the single-executable agent for this platform
  manifest.json                                  version, files and their SHA-256

The version is the agent package's, or FLEETBACK_AGENT_VERSION when set. Import the dir into a
server with FLEETBACK_RELEASE_DIR=DIR pnpm start, or node packages/server/dist/main.js import-release DIR.`;

/** `<repo>/release`, from this file's place in `<repo>/packages/release/dist/`. */
const DEFAULT_OUT_DIR = fileURLToPath(new URL("../../../release", import.meta.url));

async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    // `pnpm release -- --out DIR` hands the `--` on.
    args: argv[0] === "--" ? argv.slice(1) : argv,
    options: {
      out: { type: "string" },
      "no-sea": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const version = releaseVersion(env, await findAgentPackage());
  const release = await buildRelease({
    outDir: values.out ?? DEFAULT_OUT_DIR,
    version,
    sea: !values["no-sea"],
    log: (line) => console.log(`release: ${line}`),
  });
  console.log(`release: agent ${version} written to ${release.dir}`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2), process.env).catch((error: unknown) => {
  console.error(`release: ${error instanceof Error ? error.message : String(error)}`);
  if (error instanceof Error && error.cause instanceof Error) {
    console.error(error.cause.message);
  }
  return 1;
});

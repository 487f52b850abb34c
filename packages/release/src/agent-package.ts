/**
 * @module agent-package
 * Where the agent package is and which version a release gets: the agent's package.json version,
 * or FLEETBACK_AGENT_VERSION when set, the same override the agent's bundle script honours.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** Letters, digits and `. + -`, starting alphanumeric: safe in a file name, a URL and install.sh. */
const VERSION = /^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$/;

export interface AgentPackage {
  /** The package directory (holds `dist/cli.js`, `dist/bundle/` and `scripts/bundle.mjs`). */
  dir: string;
  version: string;
}

/** The agent package in `dir`, by default the workspace's `@fleetback/agent` as this package resolves it. */
export async function findAgentPackage(dir?: string): Promise<AgentPackage> {
  const manifestPath =
    dir === undefined
      ? createRequire(import.meta.url).resolve("@fleetback/agent/package.json")
      : join(dir, "package.json");
  const manifest: unknown = JSON.parse(await readFile(manifestPath, "utf8"));
  if (typeof manifest !== "object" || manifest === null || !("version" in manifest)) {
    throw new Error(`${manifestPath} has no version`);
  }
  const { version } = manifest;
  if (typeof version !== "string") {
    throw new Error(`${manifestPath} has no version`);
  }
  return { dir: dirname(manifestPath), version };
}

export function isReleaseVersion(version: string): boolean {
  return VERSION.test(version);
}

/** FLEETBACK_AGENT_VERSION if set and not empty, else the agent package's version. */
export function releaseVersion(env: NodeJS.ProcessEnv, agent: AgentPackage): string {
  const version = env.FLEETBACK_AGENT_VERSION || agent.version;
  if (!isReleaseVersion(version)) {
    throw new RangeError(
      `release version ${JSON.stringify(version)} must be letters, digits and . + - (at most 64), starting alphanumeric`,
    );
  }
  return version;
}

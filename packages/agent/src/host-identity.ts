/**
 * @module host-identity
 * Who this agent is: its own version (package.json's, so a release bump is one edit) and the
 * host facts sent at enrolment and in hello, with Node's names (`linux`, `x64`).
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";

export interface HostIdentity {
  hostname: string;
  os: string;
  arch: string;
}

let version: string | undefined;

/** Read on first use: this file sits one level below package.json in both src/ and dist/. */
export function agentVersion(): string {
  // The single-file bundle carries its version in a global set by its banner (scripts/bundle.mjs).
  const baked: unknown = (globalThis as { __FLEETBACK_AGENT_VERSION__?: unknown })
    .__FLEETBACK_AGENT_VERSION__;
  if (version === undefined && typeof baked === "string" && baked !== "") {
    version = baked;
  }
  if (version === undefined) {
    let found: unknown;
    try {
      const manifest: unknown = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
      found =
        manifest !== null && typeof manifest === "object" && "version" in manifest
          ? manifest.version
          : undefined;
    } catch {
      // A bundle without its package.json still runs; the server then shows an unknown version.
    }
    version = typeof found === "string" && found !== "" ? found : "0.0.0-unknown";
  }
  return version;
}

export function detectHostIdentity(): HostIdentity {
  return { hostname: hostname() || "unknown", os: process.platform, arch: process.arch };
}

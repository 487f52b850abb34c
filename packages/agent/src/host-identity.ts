/**
 * @module host-identity
 * Who this agent is: its own version (package.json's, so a release bump is one edit) and the
 * host facts sent at enrolment and in hello, with Node's names (`linux`, `x64`).
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { TIME_ZONE_MAX_LENGTH, TIME_ZONE_PATTERN } from "@fleetback/protocol";

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

/**
 * The zone the scheduler reads cron in (cron-parser's default is the process's local zone), sent
 * in hello so the server judges freshness by the same clock. Undefined when Node reports nothing
 * the protocol's pattern accepts.
 */
export function localTimeZone(): string | undefined {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return typeof zone === "string" &&
    zone.length <= TIME_ZONE_MAX_LENGTH &&
    new RegExp(TIME_ZONE_PATTERN).test(zone)
    ? zone
    : undefined;
}

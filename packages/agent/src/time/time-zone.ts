/**
 * @module time/time-zone
 * The zone the scheduler reads cron in (the process's local zone), sent in hello so the server
 * judges freshness by the same clock.
 *
 * It is read from where the C library and ICU read it, `TZ` or the `/etc/localtime` link, before
 * asking `Intl`: the first `Intl.DateTimeFormat` loads ICU's locale data, ~8 MiB of resident
 * memory for the agent's whole life, against an idle budget of 60 MB (issue 19, B8). `Intl`
 * stays the answer whenever the files do not name a zone plainly (a POSIX rule in `TZ`, a copied
 * `/etc/localtime`).
 */
import { existsSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { TIME_ZONE_MAX_LENGTH, TIME_ZONE_PATTERN } from "@fleetback/protocol";

export interface TimeZoneSources {
  env: NodeJS.ProcessEnv;
  /** The target of a symbolic link, or undefined when the path is not one. */
  readLink(path: string): string | undefined;
  exists(path: string): boolean;
  fromIntl(): string | undefined;
}

export const systemTimeZoneSources: TimeZoneSources = {
  env: process.env,
  readLink(path) {
    try {
      return readlinkSync(path);
    } catch {
      return undefined;
    }
  },
  exists: existsSync,
  fromIntl: () => Intl.DateTimeFormat().resolvedOptions().timeZone,
};

/** What ICU's resolvedOptions() calls these: one name for the server whichever alias a host uses. */
const UTC_ALIASES = new Set([
  "Etc/UTC",
  "Etc/UCT",
  "Etc/Universal",
  "Etc/Zulu",
  "Etc/GMT",
  "Etc/GMT0",
  "Etc/GMT+0",
  "Etc/GMT-0",
  "Etc/Greenwich",
  "GMT",
  "GMT0",
  "GMT+0",
  "GMT-0",
  "Greenwich",
  "UCT",
  "Universal",
  "Zulu",
]);

const ZONEINFO_MARK = "/zoneinfo/";

/** Undefined when nothing the protocol's pattern accepts can be found. */
export function localTimeZone(sources: TimeZoneSources = systemTimeZoneSources): string | undefined {
  const zone = fromFiles(sources) ?? sources.fromIntl();
  if (typeof zone !== "string") {
    return undefined;
  }
  const named = UTC_ALIASES.has(zone) ? "UTC" : zone;
  return named.length <= TIME_ZONE_MAX_LENGTH && new RegExp(TIME_ZONE_PATTERN).test(named)
    ? named
    : undefined;
}

function fromFiles(sources: TimeZoneSources): string | undefined {
  const zoneDir = sources.env.TZDIR || "/usr/share/zoneinfo";
  const tz = sources.env.TZ;
  if (tz !== undefined) {
    // `TZ=:Europe/Berlin` and `TZ=Europe/Berlin` name a zone file; an empty TZ or a POSIX rule
    // (`CET-1CEST,M3.5.0,M10.5.0/3`) does not, and ICU's reading of those is left to Intl.
    const name = tz.startsWith(":") ? tz.slice(1) : tz;
    return isZoneName(name) && sources.exists(join(zoneDir, name)) ? name : undefined;
  }
  const target = sources.readLink("/etc/localtime");
  const at = target?.lastIndexOf(ZONEINFO_MARK) ?? -1;
  if (target === undefined || at < 0) {
    return undefined;
  }
  // Some distributions link into zoneinfo/posix/; zoneinfo/right/ counts leap seconds, which
  // no zone name says, so that one is left to Intl too.
  const name = target.slice(at + ZONEINFO_MARK.length).replace(/^posix\//, "");
  return isZoneName(name) && !name.startsWith("right/") ? name : undefined;
}

function isZoneName(name: string): boolean {
  return (
    name !== "" &&
    !name.split("/").some((part) => part === "" || part === "." || part === "..") &&
    new RegExp(TIME_ZONE_PATTERN).test(name)
  );
}

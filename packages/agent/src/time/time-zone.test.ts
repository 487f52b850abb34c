import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { localTimeZone, systemTimeZoneSources, type TimeZoneSources } from "./time-zone.js";

function sources(overrides: Partial<TimeZoneSources>): TimeZoneSources {
  return {
    env: {},
    readLink: () => undefined,
    exists: () => true,
    fromIntl: () => {
      throw new Error("Intl was asked");
    },
    ...overrides,
  };
}

/** What a Node process with this TZ (unset when undefined) says through Intl. */
function intlIn(tz: string | undefined): string {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH };
  if (tz !== undefined) {
    env.TZ = tz;
  }
  return execFileSync(process.execPath, ["-p", "Intl.DateTimeFormat().resolvedOptions().timeZone"], {
    env,
    encoding: "utf8",
  }).trim();
}

function canonical(zone: string): string | undefined {
  return new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
}

describe("localTimeZone", () => {
  it("names the zone TZ names, with or without its colon, without asking Intl", () => {
    expect(localTimeZone(sources({ env: { TZ: "Europe/Berlin" } }))).toBe("Europe/Berlin");
    expect(localTimeZone(sources({ env: { TZ: ":America/New_York" } }))).toBe("America/New_York");
  });

  it("reads the /etc/localtime link when TZ is unset, without asking Intl", () => {
    const link = (target: string) =>
      sources({ readLink: (path) => (path === "/etc/localtime" ? target : undefined) });
    expect(localTimeZone(link("/usr/share/zoneinfo/Asia/Tokyo"))).toBe("Asia/Tokyo");
    expect(localTimeZone(link("../usr/share/zoneinfo/posix/Europe/Paris"))).toBe("Europe/Paris");
    expect(localTimeZone(link("/usr/share/zoneinfo/Etc/UTC"))).toBe("UTC");
  });

  it("asks Intl when the files do not name a zone plainly", () => {
    const intl = { fromIntl: () => "Pacific/Auckland" };
    expect(localTimeZone(sources({ ...intl, env: { TZ: "CET-1CEST,M3.5.0,M10.5.0/3" } }))).toBe(
      "Pacific/Auckland",
    );
    expect(localTimeZone(sources({ ...intl, env: { TZ: "" } }))).toBe("Pacific/Auckland");
    expect(localTimeZone(sources({ ...intl, env: { TZ: "Mars/Olympus" }, exists: () => false }))).toBe(
      "Pacific/Auckland",
    );
    expect(localTimeZone(sources({ ...intl, env: { TZ: "../../etc/passwd" } }))).toBe("Pacific/Auckland");
    expect(localTimeZone(sources({ ...intl, readLink: () => "/usr/share/zoneinfo/right/Europe/Oslo" }))).toBe(
      "Pacific/Auckland",
    );
    // A copied /etc/localtime is no link at all.
    expect(localTimeZone(sources(intl))).toBe("Pacific/Auckland");
  });

  it("says nothing the protocol's pattern rejects", () => {
    expect(localTimeZone(sources({ fromIntl: () => "Bad Zone!" }))).toBeUndefined();
    expect(localTimeZone(sources({ fromIntl: () => undefined }))).toBeUndefined();
  });

  // The point of reading files is to agree with ICU without loading it: on this machine's own
  // zone files the answer must be Intl's, for each way a host sets its zone.
  it.each([
    undefined,
    "Europe/Berlin",
    ":America/New_York",
    "Asia/Kolkata",
    "UTC",
    "Etc/UTC",
    "CET-1CEST,M3.5.0,M10.5.0/3",
  ])("agrees with Intl in a process with TZ=%s", (tz) => {
    const env: NodeJS.ProcessEnv = tz === undefined ? {} : { TZ: tz };
    const zone = localTimeZone({ ...systemTimeZoneSources, env, fromIntl: () => intlIn(tz) });
    // ICU names some zones by their old alias (Asia/Kolkata is its Asia/Calcutta): the same zone.
    expect(zone && canonical(zone)).toBe(canonical(intlIn(tz)));
  });
});

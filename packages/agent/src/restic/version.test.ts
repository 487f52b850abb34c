import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resticFixturesDir } from "../testing/tools.js";
import { formatToolVersion, isAtLeast, parseToolVersion } from "./version.js";

const read = (path: string) => readFileSync(join(resticFixturesDir(), path), "utf8");

describe("parseToolVersion on real restic output", () => {
  it.each([
    ["0.14.0/local/version.stdout", "0.14.0"],
    ["0.18.0/local/version.stdout", "0.18.0"],
    ["0.18.0/local/version-json.stdout", "0.18.0"],
    // 0.14 ignores --json and prints the text line
    ["0.14.0/local/version-json.stdout", "0.14.0"],
  ])("%s", (path, expected) => {
    const version = parseToolVersion(read(path));
    expect(version && formatToolVersion(version)).toBe(expected);
  });
});

describe("parseToolVersion edge cases", () => {
  it("keeps a development suffix", () => {
    const version = parseToolVersion(
      "restic 0.18.0-dev (compiled manually) compiled with go1.24 on linux/amd64",
    );
    expect(version).toEqual({ major: 0, minor: 18, patch: 0, suffix: "-dev" });
  });

  it("reads the 0.17 JSON without message_type", () => {
    expect(parseToolVersion('{"version":"0.17.3","go_version":"go1.23"}')).toMatchObject({
      minor: 17,
      patch: 3,
    });
  });

  it.each(["", "bash: restic: command not found", "{not json", '{"version":"x"}', "restic version unknown"])(
    "returns undefined for %j",
    (text) => {
      expect(parseToolVersion(text)).toBeUndefined();
    },
  );
});

describe("isAtLeast", () => {
  const v = (text: string) => {
    const parsed = parseToolVersion(`restic ${text} compiled with go1 on linux/amd64`);
    if (!parsed) {
      throw new Error(text);
    }
    return parsed;
  };
  it("gates on minor and patch", () => {
    expect(isAtLeast(v("0.17.0"), 0, 17)).toBe(true);
    expect(isAtLeast(v("0.16.4"), 0, 17)).toBe(false);
    expect(isAtLeast(v("0.18.0"), 0, 16)).toBe(true);
    expect(isAtLeast(v("0.17.0"), 0, 17, 1)).toBe(false);
    expect(isAtLeast(v("1.0.0"), 0, 17)).toBe(true);
    expect(isAtLeast(v("0.14.0"), 0, 16)).toBe(false);
  });
});

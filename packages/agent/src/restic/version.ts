/**
 * @module restic/version
 * Reads restic's version from `restic version` output (text on every release, JSON from 0.17 on)
 * and compares versions, because flags and output fields are gated by tool version.
 */

export interface ToolVersion {
  major: number;
  minor: number;
  patch: number;
  /** Anything after the patch number, e.g. "-dev"; empty for releases. */
  suffix: string;
}

const TEXT_LINE = /^restic (\d+)\.(\d+)\.(\d+)(\S*)(?: \([^)]*\))? compiled with \S+ on \S+\/\S+/m;
const BARE_VERSION = /^(\d+)\.(\d+)\.(\d+)(\S*)$/;

function fromMatch(match: RegExpExecArray): ToolVersion {
  return {
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: Number(match[3]),
    suffix: match[4] ?? "",
  };
}

/** Parses the stdout of `restic version` or `restic version --json`; undefined when unrecognised. */
export function parseToolVersion(stdout: string): ToolVersion | undefined {
  const trimmed = stdout.trim();
  if (trimmed.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(trimmed.split("\n")[0] ?? "");
      if (parsed && typeof parsed === "object" && "version" in parsed && typeof parsed.version === "string") {
        const match = BARE_VERSION.exec(parsed.version);
        return match ? fromMatch(match) : undefined;
      }
    } catch {
      return undefined;
    }
    return undefined;
  }
  const match = TEXT_LINE.exec(trimmed);
  return match ? fromMatch(match) : undefined;
}

export function formatToolVersion(version: ToolVersion): string {
  return `${version.major}.${version.minor}.${version.patch}${version.suffix}`;
}

/** True when `version` is at least major.minor(.patch); a pre-release suffix counts as the release. */
export function isAtLeast(version: ToolVersion, major: number, minor: number, patch = 0): boolean {
  if (version.major !== major) {
    return version.major > major;
  }
  if (version.minor !== minor) {
    return version.minor > minor;
  }
  return version.patch >= patch;
}

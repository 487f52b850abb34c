/**
 * @module restic/detect-version
 * Finds out which restic the agent drives, once per process: `hello.tool_version` reports it and
 * flags are gated on it (`init --json` needs 0.15). A missing binary is not an error here: the
 * agent still connects, with tool_version "", so the operator can see why nothing runs.
 */
import type { Restic } from "./restic.js";
import { formatToolVersion, parseToolVersion, type ToolVersion } from "./version.js";

const VERSION_TIMEOUT_MS = 15_000;

export interface ToolVersionProbe {
  version(): Promise<ToolVersion | undefined>;
  /** The version as sent in hello: "" when restic is missing or unrecognised. */
  text(): Promise<string>;
}

export function createToolVersionProbe(restic: Restic): ToolVersionProbe {
  let cached: Promise<ToolVersion | undefined> | undefined;
  const detect = async (): Promise<ToolVersion | undefined> => {
    const lines: string[] = [];
    const result = await restic.run({
      subcommand: "version",
      timeoutMs: VERSION_TIMEOUT_MS,
      onLine: (line) => {
        if (line.stream === "stdout") {
          lines.push(line.text);
        }
      },
    });
    if (result.kind !== "exited" || result.exitCode !== 0) {
      return undefined;
    }
    return parseToolVersion(lines.join("\n"));
  };
  const version = () => {
    cached ??= detect();
    return cached;
  };
  return {
    version,
    async text() {
      const found = await version();
      return found ? formatToolVersion(found) : "";
    },
  };
}

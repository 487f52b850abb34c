/**
 * @module restic/flag-probe
 * Confirms a version-gated flag against the binary itself: the
 * flag is used only when `restic <subcommand> --help` lists it. Passing an unknown flag makes
 * restic fail (`unknown flag: --no-ownership`, exit 1, on 0.14 and 0.18 alike), so a version
 * table alone must never decide. The answer is probed once per binary, version and flag and kept
 * in `<state dir>/tool-flags.json`, so a restarted agent does not ask again.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../config/atomic-write.js";
import type { Logger } from "../log/logger.js";
import type { Restic } from "./restic.js";

const HELP_TIMEOUT_MS = 15_000;

export interface ToolFlagProbe {
  /** True when `restic <subcommand> --help` of this binary and version lists `flag`. */
  supports(subcommand: string, flag: string, version: string): Promise<boolean>;
}

export interface ToolFlagProbeOptions {
  restic: Restic;
  stateDir: string;
  log: Logger;
}

export function flagCachePath(stateDir: string): string {
  return join(stateDir, "tool-flags.json");
}

/** True when help text lists `flag` as an option (not merely mentions it in prose). */
export function helpListsFlag(help: string, flag: string): boolean {
  const escaped = flag.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`^\\s*(?:-\\w, )?${escaped}(?=[\\s=]|$)`, "m").test(help);
}

async function readCache(path: string): Promise<Record<string, boolean>> {
  try {
    const parsed: unknown = JSON.parse(await readFile(path, "utf8"));
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      return {};
    }
    return Object.fromEntries(
      Object.entries(parsed).filter((entry): entry is [string, boolean] => typeof entry[1] === "boolean"),
    );
  } catch {
    return {};
  }
}

export function createToolFlagProbe(options: ToolFlagProbeOptions): ToolFlagProbe {
  const path = flagCachePath(options.stateDir);
  const known = new Map<string, Promise<boolean | undefined>>();

  /** undefined: the help could not be read, so nothing is learned and the next call asks again. */
  const probe = async (key: string, subcommand: string, flag: string): Promise<boolean | undefined> => {
    const cached = (await readCache(path))[key];
    if (cached !== undefined) {
      return cached;
    }
    const lines: string[] = [];
    const result = await options.restic.run({
      subcommand,
      args: ["--help"],
      timeoutMs: HELP_TIMEOUT_MS,
      onLine: (line) => lines.push(line.text),
    });
    if (result.kind !== "exited" || result.exitCode !== 0) {
      options.log.warn("could not read restic's help; the flag is not used", { subcommand, flag });
      return undefined;
    }
    const supported = helpListsFlag(lines.join("\n"), flag);
    try {
      await writeFileAtomic(path, `${JSON.stringify({ ...(await readCache(path)), [key]: supported })}\n`);
    } catch (cause) {
      options.log.warn("could not cache restic's flag support", { error: String(cause) });
    }
    return supported;
  };

  return {
    async supports(subcommand, flag, version) {
      const key = `${options.restic.command} ${version}: ${subcommand} ${flag}`;
      let answer = known.get(key);
      if (answer === undefined) {
        answer = probe(key, subcommand, flag);
        known.set(key, answer);
      }
      const supported = await answer;
      if (supported === undefined) {
        known.delete(key);
      }
      // Unknown is "no": the flag is an extra, and guessing wrong fails the whole run.
      return supported === true;
    },
  };
}

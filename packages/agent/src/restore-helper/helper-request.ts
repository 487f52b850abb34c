/**
 * @module restore-helper/helper-request
 * What the restore helper agrees to run. It reads the argv the agent built for `restic restore`
 * (restic.ts and restore-job.ts) and accepts exactly that shape: known global flags, `restore`, a
 * snapshot id, one `--target`, `--no-ownership`, `-vv` and `--include` patterns. Anything else
 * (another subcommand, a hook, an option that reads or writes files) is refused, so a compromised
 * agent can ask the helper for a restore and nothing more. The places a restore writes are
 * `<target>/<include>` (or `<include>` for an in-place restore to `/`): each must stay clear of the
 * agent's own config, state and install directories after symlinks are resolved, on the helper's
 * side too, not only in the agent and on the server. Includes must be literal absolute paths, so
 * that the paths checked are the paths restic selects.
 */
import { isAbsolute, normalize } from "node:path";
import { literalPattern } from "../restic/literal-pattern.js";

export interface RestorePlan {
  snapshot: string;
  target: string;
  includes: string[];
  /** restic argv the helper runs (cache dir replaced by the helper's own). */
  args: string[];
}

const SNAPSHOT = /^(?:[0-9a-f]{8,64}|latest)$/;
const CAP = /^[0-9]{1,9}$/;

/** `a\[1\].txt` → `a[1].txt`: the path an escaped `--include` pattern names (restic/literal-pattern.ts). */
export function unescapeInclude(pattern: string): string {
  return pattern.replace(/\\(.)/g, "$1");
}

/** The argv after the global flags: `[--cache-dir X] [--limit-* N] [--json] restore ...`. */
export function planRestore(
  args: readonly string[],
  cacheDir: string | undefined,
): { ok: true; plan: RestorePlan } | { ok: false; error: string } {
  const global: string[] = cacheDir === undefined ? ["--no-cache"] : ["--cache-dir", cacheDir];
  let index = 0;
  while (index < args.length && args[index] !== "restore") {
    const flag = args[index];
    const value = args[index + 1];
    if (flag === "--json") {
      global.push(flag);
      index += 1;
    } else if (flag === "--cache-dir" && value !== undefined) {
      index += 2; // the agent's cache dir is read-only for the helper; its own replaces it
    } else if (
      (flag === "--limit-upload" || flag === "--limit-download") &&
      value !== undefined &&
      CAP.test(value)
    ) {
      global.push(flag, value);
      index += 2;
    } else {
      return {
        ok: false,
        error: `the restore helper runs only restic restore; it refuses ${describe(flag)}`,
      };
    }
  }
  if (args[index] !== "restore") {
    return { ok: false, error: "the restore helper runs only restic restore" };
  }
  const snapshot = args[index + 1];
  if (snapshot === undefined || !SNAPSHOT.test(snapshot)) {
    return { ok: false, error: "the restore needs a snapshot id (hex)" };
  }
  let target: string | undefined;
  const options: string[] = [];
  const includes: string[] = [];
  for (let i = index + 2; i < args.length; i += 1) {
    const flag = args[i];
    const value = args[i + 1];
    if (flag === "--target" && value !== undefined && target === undefined) {
      target = value;
      i += 1;
    } else if (flag === "--include" && value !== undefined && value !== "") {
      // restic matches includes as patterns: `…/et?/agent.json` or a relative `agent.json` could
      // select what the checks below never see (issue 34). Only literal absolute paths pass.
      if (!value.startsWith("/") || literalPattern(unescapeInclude(value)) !== value) {
        return {
          ok: false,
          error: `the restore helper takes only absolute paths with every pattern character escaped as --include; it refuses ${describe(value)}`,
        };
      }
      includes.push(value);
      i += 1;
    } else if (flag === "--no-ownership" || flag === "-vv") {
      options.push(flag);
    } else {
      return { ok: false, error: `the restore helper refuses the restore option ${describe(flag)}` };
    }
  }
  if (target === undefined || !isAbsolute(target) || normalize(target) !== target.replace(/(.)\/$/, "$1")) {
    return { ok: false, error: "the restore needs one absolute, normalised --target" };
  }
  if (includes.length === 0) {
    return { ok: false, error: "the restore helper restores selected paths only (--include)" };
  }
  const args2 = [...global, "restore", snapshot, "--target", target, ...options];
  for (const include of includes) {
    args2.push("--include", include);
  }
  return { ok: true, plan: { snapshot, target, includes: includes.map(unescapeInclude), args: args2 } };
}

function describe(flag: string | undefined): string {
  return flag === undefined ? "an empty argument list" : JSON.stringify(flag.slice(0, 40));
}

// Shared with the agent's own restore job, which refuses the same paths before asking the helper.
export { protectedHit, resolveExisting, writtenPaths } from "./agent-dirs.js";

/**
 * @module restore-helper/restore-target
 * Where a restore writes, decided at run time on the host. The wizard's default target is
 * `$HOME/fleetback-restore/<job-id>/`; `$HOME`, `${HOME}` and a leading `~/` are expanded from the
 * agent's own environment, and any other variable is refused (the server's form applies the same
 * rule, RESTORE_TARGET_PATTERN), so a
 * typo never becomes a literal `$FOO` directory. An in-place restore always targets `/`: restic
 * writes `<target>/<original absolute path>`, so `--target / --include /srv/x` puts `/srv/x` back
 * where it was.
 */
import { isAbsolute, normalize } from "node:path";

export type TargetResult = { ok: true; dir: string } | { ok: false; error: string };

const HOME_PREFIX = /^(?:\$HOME|\$\{HOME\})(?=\/|$)/;

/** Expands the home forms of `target` with `home`; refuses other variables and relative results. */
export function expandRestoreTarget(target: string, home: string | undefined): TargetResult {
  let expanded = target;
  const usesHome = HOME_PREFIX.test(target) || target.startsWith("~/");
  if (usesHome) {
    if (home === undefined || !isAbsolute(home)) {
      return {
        ok: false,
        error: `cannot expand ${JSON.stringify(target)}: HOME is not set to an absolute path`,
      };
    }
    expanded = target.startsWith("~/") ? `${home}${target.slice(1)}` : target.replace(HOME_PREFIX, home);
  }
  if (expanded.includes("$")) {
    return {
      ok: false,
      error: `restore target ${JSON.stringify(target)} uses a variable other than $HOME; nothing was restored`,
    };
  }
  if (!isAbsolute(expanded)) {
    return {
      ok: false,
      error: `restore target ${JSON.stringify(target)} is not an absolute path on this host; nothing was restored`,
    };
  }
  const dir = normalize(expanded);
  return { ok: true, dir: dir.length > 1 && dir.endsWith("/") ? dir.slice(0, -1) : dir };
}

/**
 * @module support/unit-sandbox
 * Runs a service the way its systemd unit confines it, derived from the unit file itself, so the
 * sandbox follows whenever the installer's unit changes. A new mount namespace (`unshare -m`)
 * gets the unit's mount rules, and `setpriv` its privilege rules, then execs ExecStart with the
 * unit's environment:
 *
 * - `ProtectSystem=strict`: every mount read-only except /proc, /sys and /dev;
 *   `ReadWritePaths=` (a `-` prefix: skipped when missing) bound writable, `ReadOnlyPaths=` bound
 *   read-only; `PrivateTmp=yes`: fresh tmpfs on /tmp and /var/tmp; `ProtectKernelTunables=yes`:
 *   /proc/sys and /sys read-only; `ProtectControlGroups=yes`: /sys/fs/cgroup read-only.
 * - `NoNewPrivileges=yes` and `CapabilityBoundingSet=` through setpriv.
 * - Socket activation (`ListenStream=` of the matching .socket) through systemd's own
 *   systemd-socket-activate, which passes the listening socket as fd 3 with LISTEN_FDS/LISTEN_PID.
 *
 * Deviations, each because this runs on the test machine rather than a host: `CacheDirectory=`
 * is made under the test's root instead of /var/cache; HOME comes from the test instead of /root.
 * A [Service] directive this module does not know fails the test: a new confinement must be
 * emulated here (or listed as not emulated, with why) before a test can claim to run under it.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { parseUnitDirectives } from "@fleetback/installer";

/** Directives that change nothing a test on this machine could observe, and why. */
const NOT_EMULATED: Record<string, string> = {
  Type: "start-up notification only",
  User: "checked: the tests run as root, as the unit says",
  Restart: "bin/supervisor.mjs applies the restart rules",
  RestartSec: "bin/supervisor.mjs applies the restart rules",
  RestartPreventExitStatus: "bin/supervisor.mjs applies the restart rules",
  ProtectKernelModules: "the bounding set already lacks CAP_SYS_MODULE",
  LockPersonality: "personality(2) changes are not exercised by the agent",
  RestrictAddressFamilies: "seccomp filter; the agent uses only AF_UNIX and AF_INET anyway",
  CacheDirectoryMode: "the emulated cache dir is created 0700",
  StateDirectoryMode: "the emulated state dir is created 0700",
};
const EMULATED = new Set([
  "ExecStart",
  "Environment",
  "ProtectSystem",
  "ReadWritePaths",
  "ReadOnlyPaths",
  "PrivateTmp",
  "NoNewPrivileges",
  "CapabilityBoundingSet",
  "ProtectKernelTunables",
  "ProtectControlGroups",
  "CacheDirectory",
  "StateDirectory",
]);
const SYSTEMD_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export interface SandboxOptions {
  /** Drop-ins of the unit (`<unit>.d/*.conf`), applied after it in order. */
  dropIns?: string[];
  /** Where an emulated `CacheDirectory=` goes (instead of /var/cache). */
  cacheRoot: string;
  /** Variables a test adds (FLEETBACK_RESTIC, HOME, log level). */
  env?: Record<string, string>;
  /** Socket activation: the path the .socket unit's ListenStream= names. */
  listen?: string;
}

export interface SandboxCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

function unquoteWords(line: string): string[] {
  const words: string[] = [];
  for (const match of line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)) {
    const word = match[1] !== undefined ? match[1].replace(/\\(.)/g, "$1") : (match[2] ?? "");
    words.push(word.replace(/%%/g, "%").replace(/\$\$/g, "$"));
  }
  return words;
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The [Service] settings of the unit and its drop-ins; list settings accumulate, an empty one resets. */
function serviceSettings(texts: string[]): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  for (const text of texts) {
    for (const { section, key, value } of parseUnitDirectives(text)) {
      if (section !== "Service") {
        continue;
      }
      if (!EMULATED.has(key) && !(key in NOT_EMULATED)) {
        throw new Error(`unit-sandbox: the unit sets ${key}=, which this sandbox does not emulate; add it`);
      }
      const list = value === "" ? [] : [...(settings.get(key) ?? []), value];
      settings.set(key, list);
    }
  }
  return settings;
}

export function sandboxFromUnit(unit: string, options: SandboxOptions): SandboxCommand {
  const settings = serviceSettings([unit, ...(options.dropIns ?? [])]);
  const last = (key: string) => settings.get(key)?.at(-1);
  const words = (key: string) => (settings.get(key) ?? []).flatMap((value) => value.split(/\s+/));
  if ((last("User") ?? "root") !== "root" || process.getuid?.() !== 0) {
    throw new Error("unit-sandbox: the unit runs as root and so must the test");
  }
  const exec = unquoteWords(last("ExecStart") ?? "");
  if (exec.length === 0) {
    throw new Error("unit-sandbox: the unit has no ExecStart");
  }
  const env: Record<string, string> = {
    PATH: SYSTEMD_DEFAULT_PATH,
    HOME: "/root",
    USER: "root",
    LOGNAME: "root",
  };
  for (const assignment of settings.get("Environment") ?? []) {
    for (const word of unquoteWords(assignment)) {
      const eq = word.indexOf("=");
      env[word.slice(0, eq)] = word.slice(eq + 1);
    }
  }
  for (const name of words("CacheDirectory")) {
    const dir = join(options.cacheRoot, name);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    env.CACHE_DIRECTORY = env.CACHE_DIRECTORY ? `${env.CACHE_DIRECTORY}:${dir}` : dir;
  }
  // systemd's StateDirectory: the restore helper's used orders and staged restores.
  for (const name of words("StateDirectory")) {
    const dir = join(options.cacheRoot, "..", "state-directories", name);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    env.STATE_DIRECTORY = env.STATE_DIRECTORY ? `${env.STATE_DIRECTORY}:${dir}` : dir;
  }
  Object.assign(env, options.env ?? {});

  const script: string[] = ["set -euo pipefail"];
  const rw: string[] = [];
  for (const entry of words("ReadWritePaths")) {
    const soft = entry.startsWith("-");
    const path = soft ? entry.slice(1) : entry;
    script.push(
      soft
        ? `if [ -e ${shellQuote(path)} ]; then mount --bind ${shellQuote(path)} ${shellQuote(path)}; fi`
        : `mount --bind ${shellQuote(path)} ${shellQuote(path)}`,
    );
    rw.push(path);
  }
  const protectSystem = last("ProtectSystem");
  if (protectSystem !== undefined && protectSystem !== "strict") {
    throw new Error(`unit-sandbox: ProtectSystem=${protectSystem} is not emulated (only strict)`);
  }
  if (protectSystem === "strict") {
    // Every mount but the API file systems and the writable binds, deepest last so none is skipped.
    const keep = rw.map((path) => `${shellQuote(path)}`).join("|");
    script.push(
      `awk '{print $5}' /proc/self/mountinfo | while read -r mp; do case "$mp" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*${keep ? `|${keep}` : ""}) continue;; esac; mount -o remount,bind,ro "$mp" 2>/dev/null || true; done`,
    );
  }
  for (const path of words("ReadOnlyPaths")) {
    script.push(
      `mount --bind ${shellQuote(path)} ${shellQuote(path)}`,
      `mount -o remount,bind,ro ${shellQuote(path)}`,
    );
  }
  if (last("PrivateTmp") === "yes") {
    script.push("mount -t tmpfs -o mode=1777 tmpfs /tmp", "mount -t tmpfs -o mode=1777 tmpfs /var/tmp");
  }
  if (last("ProtectKernelTunables") === "yes") {
    script.push(
      "mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys",
      `awk '{print $5}' /proc/self/mountinfo | while read -r mp; do case "$mp" in /sys|/sys/*) mount -o remount,bind,ro "$mp" 2>/dev/null || true;; esac; done`,
    );
  } else if (last("ProtectControlGroups") === "yes") {
    script.push(
      `awk '{print $5}' /proc/self/mountinfo | while read -r mp; do case "$mp" in /sys/fs/cgroup|/sys/fs/cgroup/*) mount -o remount,bind,ro "$mp" 2>/dev/null || true;; esac; done`,
    );
  }
  const setpriv: string[] = [];
  if (last("NoNewPrivileges") === "yes") {
    setpriv.push("--no-new-privs");
  }
  const caps = words("CapabilityBoundingSet");
  if (settings.has("CapabilityBoundingSet")) {
    const names = caps.map((cap) => `+${cap.toLowerCase().replace(/^cap_/, "")}`);
    setpriv.push("--bounding-set", ["-all", ...names].join(","), "--inh-caps", "-all");
  }
  script.push(`exec setpriv ${setpriv.map(shellQuote).join(" ")} -- ${exec.map(shellQuote).join(" ")}`);

  const inner = ["bash", "-c", script.join("\n")];
  // systemd-socket-activate hands its child only what -E names (no secret is among these).
  const activated =
    options.listen === undefined
      ? inner
      : [
          "systemd-socket-activate",
          "-l",
          options.listen,
          ...Object.entries(env).flatMap(([name, value]) => ["-E", `${name}=${value}`]),
          ...inner,
        ];
  return { command: "unshare", args: ["-m", "--propagation", "private", "--", ...activated], env };
}

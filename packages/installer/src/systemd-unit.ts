/**
 * @module systemd-unit
 * The agent's systemd units. The agent runs as root so that it can read every file, and its unit
 * takes back everything root does not need: no privilege escalation, one capability (reading any
 * file), and a filesystem that is read-only except the agent's config dir, its state dir, the
 * default restore dir and the local repository paths the operator names.
 *
 * Restores are privilege-separated, the way OpenSSH separates its privileged monitor: the
 * restore helper (`fleetback-agent restore-helper`) is started by systemd through a root-only
 * socket when the agent connects, may write outside the agent's paths with just the capabilities
 * restoring files needs, can never write the agent's own directories (read-only for it), and runs
 * only `restic restore` requests whose targets stay clear of them and that an order signed by the
 * server describes (its key pinned here, where the agent cannot write). Credentials reach it
 * over the socket, never through a command line, a unit property or its environment.
 */

export interface AgentUnitOptions {
  /** Absolute path of the node binary (or of the single-executable agent, then `bundle` is empty). */
  execPath: string;
  /** Absolute path of the agent bundle run by `execPath`; empty for a single-executable agent. */
  bundle: string;
  configDir: string;
  stateDir: string;
  /** Default restore directory; soft (`-`) in ReadWritePaths so a missing dir never blocks start. */
  restoreDir: string;
  serverUrl: string;
  /** The restore helper's socket; the agent's unit names it so that restores go there. */
  restoreSocket?: string;
}

export const DEFAULT_AGENT_PATHS = {
  configDir: "/etc/fleetback-agent",
  stateDir: "/var/lib/fleetback-agent",
  restoreDir: "/root/fleetback-restore",
  bundleDir: "/opt/fleetback-agent",
} as const;

export const RESTORE_SOCKET_PATH = "/run/fleetback-agent-restore.sock";
export const RESTORE_UNIT_NAME = "fleetback-agent-restore";

/**
 * Exit statuses after which restarting cannot help (the agent's cli/exit-codes.ts): usage (2),
 * not enrolled or unusable config (3), refused (4), host deleted or token revoked (5), protocol
 * too old (6). Any other exit is restarted, 75 (an update is staged) above all.
 */
export const FATAL_EXIT_STATUSES = [2, 3, 4, 5, 6] as const;

/** Each capability the agent keeps, and why; everything else root has is dropped. */
export const AGENT_CAPABILITIES: ReadonlyArray<readonly [string, string]> = [
  ["CAP_DAC_READ_SEARCH", "read every file and list every directory that is backed up"],
];

/** Each capability the restore helper keeps: what writing restored files back as recorded needs. */
export const RESTORE_CAPABILITIES: ReadonlyArray<readonly [string, string]> = [
  [
    "CAP_DAC_OVERRIDE",
    "write restored files into directories whose permissions would refuse root without it",
  ],
  ["CAP_CHOWN", "give restored files back their recorded owner and group"],
  ["CAP_FOWNER", "set modes, times and extended attributes on restored files owned by others"],
  ["CAP_FSETID", "keep setuid/setgid bits on restored files after the owner changes"],
];

/** Standard padded base64 of a 32-byte Ed25519 public key. */
const ORDER_KEY = /^[A-Za-z0-9+/]{43}=$/;

/** One ExecStart word: `%` (specifiers) and `$` (variables) doubled, quoted when not plain. */
function quoteArg(value: string): string {
  const literal = value.replace(/[%$]/g, (char) => char + char);
  return /^[A-Za-z0-9_@%$+=:,./-]+$/.test(literal) ? literal : `"${literal.replace(/(["\\])/g, "\\$1")}"`;
}

function execLine(options: AgentUnitOptions, command: string): string {
  return [
    options.execPath,
    options.bundle,
    command,
    "--config-dir",
    options.configDir,
    "--state-dir",
    options.stateDir,
  ]
    .filter((part) => part !== "")
    .map(quoteArg)
    .join(" ");
}

function capabilityLines(capabilities: ReadonlyArray<readonly [string, string]>): string {
  return `${capabilities.map(([cap, why]) => `# ${cap}: ${why}.`).join("\n")}
CapabilityBoundingSet=${capabilities.map(([cap]) => cap).join(" ")}`;
}

export function renderAgentUnit(options: AgentUnitOptions): string {
  const exec = execLine(options, "run");
  const socket = options.restoreSocket ?? RESTORE_SOCKET_PATH;
  return `# Installed by ${options.serverUrl}/install/install.sh. Re-running the installer rewrites this file.
[Unit]
Description=Fleetback backup agent
Documentation=${options.serverUrl}/
After=network-online.target ${RESTORE_UNIT_NAME}.socket
Wants=network-online.target ${RESTORE_UNIT_NAME}.socket

[Service]
Type=simple
# Root, so that the whole filesystem can be read; no service user is created.
User=root
ExecStart=${exec}
Restart=always
RestartSec=5
# Revoked, deleted, too old or unusable config: a restart cannot help, so the agent stays down
# (fleetback-agent --help lists the statuses). 75, an update waiting for a restart, is restarted.
RestartPreventExitStatus=${FATAL_EXIT_STATUSES.join(" ")}
# The agent can never gain privileges beyond what this unit grants.
NoNewPrivileges=yes
${capabilityLines(AGENT_CAPABILITIES)}
# Everything is read-only except the agent's own config and state and the default restore dir;
# a local repository path is added by a drop-in (install.sh --repo-path). Restores are written
# by the restore helper (${RESTORE_UNIT_NAME}.service), reached through its socket.
ProtectSystem=strict
ReadWritePaths=${options.configDir} ${options.stateDir} -${options.restoreDir}
PrivateTmp=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectControlGroups=yes
# No RestrictSUIDSGID=: it would deny the setuid/setgid bits CAP_FSETID is kept for.
LockPersonality=yes
Environment=FLEETBACK_AGENT_CONFIG_DIR=${options.configDir}
Environment=FLEETBACK_AGENT_STATE_DIR=${options.stateDir}
Environment=FLEETBACK_RESTORE_SOCKET=${socket}

[Install]
WantedBy=multi-user.target
`;
}

/** The restore helper's socket: root-only, so only root (the agent) can ask for a restore. */
export function renderRestoreSocketUnit(options: { serverUrl: string; restoreSocket?: string }): string {
  return `# Installed by ${options.serverUrl}/install/install.sh. Re-running the installer rewrites this file.
[Unit]
Description=Fleetback restore helper socket
Documentation=${options.serverUrl}/

[Socket]
ListenStream=${options.restoreSocket ?? RESTORE_SOCKET_PATH}
SocketUser=root
SocketGroup=root
SocketMode=0600
Accept=no

[Install]
WantedBy=sockets.target
`;
}

/**
 * The restore helper, started by its socket. It writes wherever a restore was asked to write
 * (in place, any absolute target, the default dir), so its filesystem is not made read-only,
 * except the agent's own directories: a restore can never reach the agent's config, state,
 * update records or installed code, even through a symlink restic follows.
 */
export function renderRestoreHelperUnit(
  options: AgentUnitOptions & { bundleDir: string; restoreOrderKey?: string },
): string {
  const key = options.restoreOrderKey;
  if (key !== undefined && !ORDER_KEY.test(key)) {
    throw new RangeError("restoreOrderKey must be the base64 of a 32-byte Ed25519 public key");
  }
  const pin =
    key === undefined
      ? "# No restore-order key: this helper refuses every restore until the installer pins one."
      : `# The server's restore-order key: the helper runs only restores it signed (issue 34).
Environment=FLEETBACK_RESTORE_ORDER_KEY=${key}`;
  return `# Installed by ${options.serverUrl}/install/install.sh. Re-running the installer rewrites this file.
[Unit]
Description=Fleetback restore helper (runs restic restore for the agent)
Documentation=${options.serverUrl}/
Requires=${RESTORE_UNIT_NAME}.socket
After=${RESTORE_UNIT_NAME}.socket network-online.target

[Service]
Type=simple
User=root
ExecStart=${execLine(options, "restore-helper")}
# Started on demand by the socket; it exits by itself after a quiet minute.
Restart=no
NoNewPrivileges=yes
${capabilityLines(RESTORE_CAPABILITIES)}
# The agent's own directories are never written by a restore.
ReadOnlyPaths=${options.configDir} ${options.stateDir} ${options.bundleDir}
# restic's cache for restores ($CACHE_DIRECTORY); the agent's own cache is read-only here.
CacheDirectory=${RESTORE_UNIT_NAME}
CacheDirectoryMode=0700
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectControlGroups=yes
LockPersonality=yes
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
Environment=FLEETBACK_AGENT_CONFIG_DIR=${options.configDir}
Environment=FLEETBACK_AGENT_STATE_DIR=${options.stateDir}
Environment=FLEETBACK_AGENT_INSTALL_DIR=${options.bundleDir}
${pin}
# Orders already used, and restores staged for restic before 0.16; the agent cannot write here.
StateDirectory=${RESTORE_UNIT_NAME}
StateDirectoryMode=0700
`;
}

/** A drop-in that lets the agent write local repository paths (install.sh --repo-path). */
export function renderRepoPathsDropIn(paths: readonly string[]): string {
  return `# Local repository paths the agent may write (install.sh --repo-path).
[Service]
ReadWritePaths=${paths.join(" ")}
`;
}

/** Parses `Key=Value` directives of a unit, in order, for tests and for idempotent re-installs. */
export function parseUnitDirectives(unit: string): Array<{ section: string; key: string; value: string }> {
  const directives: Array<{ section: string; key: string; value: string }> = [];
  let section = "";
  for (const raw of unit.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) {
      continue;
    }
    const header = /^\[(.+)\]$/.exec(line);
    if (header?.[1]) {
      section = header[1];
      continue;
    }
    const eq = line.indexOf("=");
    if (eq > 0) {
      directives.push({ section, key: line.slice(0, eq), value: line.slice(eq + 1) });
    }
  }
  return directives;
}

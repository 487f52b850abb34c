/**
 * @module systemd-unit
 * The agent's systemd unit. The agent runs as root so that it can read every file, and the unit
 * takes back everything root does not need: no privilege escalation, a capability set limited to
 * reading any file plus what a restore needs, and a filesystem that is read-only except the
 * agent's config dir, its state dir and the default restore dir.
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
}

export const DEFAULT_AGENT_PATHS = {
  configDir: "/etc/fleetback-agent",
  stateDir: "/var/lib/fleetback-agent",
  restoreDir: "/root/fleetback-restore",
  bundleDir: "/opt/fleetback-agent",
} as const;

/** Each capability the agent keeps, and why; everything else root has is dropped. */
export const AGENT_CAPABILITIES: ReadonlyArray<readonly [string, string]> = [
  ["CAP_DAC_READ_SEARCH", "read every file and list every directory that is backed up"],
  [
    "CAP_DAC_OVERRIDE",
    "write restored files into directories whose permissions would refuse root without it",
  ],
  ["CAP_CHOWN", "give restored files back their recorded owner and group"],
  ["CAP_FOWNER", "set modes, times and extended attributes on restored files owned by others"],
  ["CAP_FSETID", "keep setuid/setgid bits on restored files after the owner changes"],
];

/** One ExecStart word: `%` (specifiers) and `$` (variables) doubled, quoted when not plain. */
function quoteArg(value: string): string {
  const literal = value.replace(/[%$]/g, (char) => char + char);
  return /^[A-Za-z0-9_@%$+=:,./-]+$/.test(literal) ? literal : `"${literal.replace(/(["\\])/g, "\\$1")}"`;
}

export function renderAgentUnit(options: AgentUnitOptions): string {
  const exec = [
    options.execPath,
    options.bundle,
    "run",
    "--config-dir",
    options.configDir,
    "--state-dir",
    options.stateDir,
  ]
    .filter((part) => part !== "")
    .map(quoteArg)
    .join(" ");
  const capabilityComments = AGENT_CAPABILITIES.map(([cap, why]) => `# ${cap}: ${why}.`).join("\n");
  return `# Installed by ${options.serverUrl}/install/install.sh. Re-running the installer rewrites this file.
[Unit]
Description=Fleetback backup agent
Documentation=${options.serverUrl}/
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
# Root, so that the whole filesystem can be read; no service user is created.
User=root
ExecStart=${exec}
Restart=always
RestartSec=5
# The agent can never gain privileges beyond what this unit grants.
NoNewPrivileges=yes
${capabilityComments}
CapabilityBoundingSet=${AGENT_CAPABILITIES.map(([cap]) => cap).join(" ")}
# Everything is read-only except the agent's own config and state and the default restore dir.
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

[Install]
WantedBy=multi-user.target
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

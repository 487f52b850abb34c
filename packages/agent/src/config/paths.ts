/**
 * @module config/paths
 * Where the agent keeps its files: flags (`--config-dir`, `--state-dir`) beat environment variables
 * (`FLEETBACK_AGENT_CONFIG_DIR`, `FLEETBACK_AGENT_STATE_DIR`) beat the packaged defaults below.
 */
import { dirname } from "node:path";

export const DEFAULT_CONFIG_DIR = "/etc/fleetback-agent";
export const DEFAULT_STATE_DIR = "/var/lib/fleetback-agent";

export interface AgentPaths {
  configDir: string;
  stateDir: string;
  /** restic binary: a path, or a name looked up on PATH. */
  restic: string;
}

export interface PathFlags {
  configDir?: string;
  stateDir?: string;
}

export function resolveAgentPaths(flags: PathFlags, env: NodeJS.ProcessEnv): AgentPaths {
  return {
    configDir: flags.configDir || env.FLEETBACK_AGENT_CONFIG_DIR || DEFAULT_CONFIG_DIR,
    stateDir: flags.stateDir || env.FLEETBACK_AGENT_STATE_DIR || DEFAULT_STATE_DIR,
    restic: env.FLEETBACK_RESTIC || "restic",
  };
}

/** The directory the agent is installed in (/opt/fleetback-agent): never a restore target either. */
export function installDirOf(env: NodeJS.ProcessEnv, argv: readonly string[], execPath: string): string {
  if (env.FLEETBACK_AGENT_INSTALL_DIR) {
    return env.FLEETBACK_AGENT_INSTALL_DIR;
  }
  const script = argv[1];
  return script !== undefined && /\.(?:m?js|cjs)$/.test(script) ? dirname(script) : dirname(execPath);
}

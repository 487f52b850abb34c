/**
 * @module @fleetback/installer
 * What the server renders for a host's installation: the install script served at
 * `/install/install.sh`, the one-line install command, and the agent's systemd units it embeds.
 */
export {
  type InstallCommandOptions,
  type InstallScriptOptions,
  type InstallSeaArtefact,
  MIN_NODE_MAJOR,
  renderInstallCommand,
  renderInstallScript,
} from "./install-script.js";
export {
  AGENT_CAPABILITIES,
  type AgentUnitOptions,
  DEFAULT_AGENT_PATHS,
  parseUnitDirectives,
  renderAgentUnit,
} from "./systemd-unit.js";

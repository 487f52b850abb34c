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
  FATAL_EXIT_STATUSES,
  parseUnitDirectives,
  RESTORE_CAPABILITIES,
  RESTORE_SOCKET_PATH,
  RESTORE_UNIT_NAME,
  renderAgentUnit,
  renderRepoPathsDropIn,
  renderRestoreHelperUnit,
  renderRestoreSocketUnit,
} from "./systemd-unit.js";

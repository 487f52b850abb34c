/**
 * @module @fleetback/installer
 * What the server renders for a host's installation: the systemd unit (and, with enrolment, the
 * install script).
 */
export {
  AGENT_CAPABILITIES,
  type AgentUnitOptions,
  DEFAULT_AGENT_PATHS,
  parseUnitDirectives,
  renderAgentUnit,
} from "./systemd-unit.js";

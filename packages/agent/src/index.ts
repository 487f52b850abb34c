/**
 * @module @fleetback/agent
 * Library entry for tests; the executable is cli.ts.
 */
export { buildToolEnvironment, isDroppedVariable } from "./restic/environment.js";
export { formatToolVersion, isAtLeast, parseToolVersion, type ToolVersion } from "./restic/version.js";

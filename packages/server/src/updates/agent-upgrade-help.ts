/**
 * @module updates/agent-upgrade-help
 * Where an operator learns how to upgrade an agent the server refused as too old: the docs page
 * (routes/docs.ts) serves it, the host page links to it and the agent channel names it in the
 * ErrProtocolTooOld it sends.
 */

export const AGENT_UPGRADE_PATH = "/docs/agent-upgrade";

/** Absolute, for the agent's log and the `error` frame: the agent knows no other origin. */
export function helpUrl(baseUrl: string): string {
  return `${baseUrl}${AGENT_UPGRADE_PATH}`;
}

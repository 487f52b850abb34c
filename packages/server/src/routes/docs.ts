/**
 * @module routes/docs
 * Help pages the server links to from places where the reader may not be signed in: the agent's
 * log and wire errors (`help_url` of ErrProtocolTooOld) and the host page. Public, since an
 * operator reading an agent's log on a host may have no session, and they hold no secret: only
 * this server's URL, its protocol versions and the installer command anyone can download.
 */
import { DEFAULT_AGENT_PATHS, MIN_NODE_MAJOR, renderInstallCommand } from "@fleetback/installer";
import { MIN_AGENT_PROTOCOL_VERSION, PROTOCOL_VERSION } from "@fleetback/protocol";
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import type { AppEnv } from "../auth/actor.js";
import { renderPage } from "../http/render.js";
import { AGENT_UPGRADE_PATH, helpUrl } from "../updates/agent-upgrade-help.js";

/**
 * The agent's exit status when the server refuses its protocol (EXIT.protocolTooOld of
 * @fleetback/agent, which the server does not load at run time; docs.test.ts checks they agree).
 */
export const AGENT_EXIT_PROTOCOL_TOO_OLD = 6;

/**
 * The first protocol whose agents update themselves (`command.update` / `update.result`, protocol
 * CHANGELOG "3 — self-update"); older ones can only be upgraded with the installer.
 */
export const SELF_UPDATE_PROTOCOL_VERSION = 3;

/** The installer command, or undefined when the base URL is one the installer refuses to embed. */
function upgradeCommand(baseUrl: string): string | undefined {
  try {
    return renderInstallCommand({ baseUrl, rerun: true });
  } catch (err) {
    if (err instanceof RangeError) {
      return undefined;
    }
    throw err;
  }
}

export function docsRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.get(AGENT_UPGRADE_PATH, (c) =>
    renderPage(c, deps.views, "pages/agent-upgrade.njk", {
      title: "Upgrade an agent",
      minProtocol: MIN_AGENT_PROTOCOL_VERSION,
      currentProtocol: PROTOCOL_VERSION,
      selfUpdateProtocol: SELF_UPDATE_PROTOCOL_VERSION,
      exitCode: AGENT_EXIT_PROTOCOL_TOO_OLD,
      baseUrl: deps.config.baseUrl,
      helpUrl: helpUrl(deps.config.baseUrl),
      installCommand: upgradeCommand(deps.config.baseUrl),
      configFile: `${DEFAULT_AGENT_PATHS.configDir}/agent.json`,
      nodeMajor: MIN_NODE_MAJOR,
    }),
  );
  return routes;
}

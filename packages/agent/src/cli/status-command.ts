/**
 * @module cli/status-command
 * `fleetback-agent status`: what an operator checks first on a host. The agent token is shown by
 * its first 6 characters only, enough to tell two tokens apart and useless to anyone reading
 * over a shoulder or a pasted support ticket.
 */
import { loadAgentConfig } from "../config/agent-config.js";
import type { AgentPaths } from "../config/paths.js";
import { requestJson } from "../net/json-request.js";
import { endpointUrl } from "../net/server-url.js";
import type { CliDeps } from "./cli-deps.js";
import { detectToolVersion } from "./common.js";
import { EXIT, type ExitCode } from "./exit-codes.js";

const HEALTH_TIMEOUT_MS = 5_000;

export function shortenToken(token: string): string {
  return `${token.slice(0, 6)}…`;
}

export async function statusCommand(deps: CliDeps, paths: AgentPaths): Promise<ExitCode> {
  const loaded = await loadAgentConfig(paths.configDir);
  const toolVersion = await detectToolVersion(deps, paths);
  const row = (label: string, value: string) => deps.out(`${`${label}:`.padEnd(15)}${value}`);

  row("agent version", deps.agentVersion);
  row("config file", loaded.ok ? loaded.path : `${loaded.path} (${loaded.reason})`);
  if (loaded.ok) {
    const { config } = loaded;
    row("server", config.server_url);
    row("host id", config.host_id);
    row("agent token", shortenToken(config.agent_token));
    row("tls pin", config.tls_pin_sha256 ?? "(none)");
  }
  row("state dir", paths.stateDir);
  row("restic", toolVersion === "" ? `${paths.restic}: not found` : `${paths.restic} (${toolVersion})`);
  if (!loaded.ok) {
    deps.err(`fleetback-agent: ${loaded.message}`);
    return EXIT.notEnrolled;
  }
  try {
    const health = await requestJson({
      method: "GET",
      url: endpointUrl(loaded.config.server_url, "/healthz"),
      tlsPin: loaded.config.tls_pin_sha256,
      timeoutMs: HEALTH_TIMEOUT_MS,
    });
    row(
      "server health",
      health.status === 200 ? "ok (/healthz answers 200)" : `/healthz answers HTTP ${health.status}`,
    );
  } catch (cause) {
    row("server health", `unreachable: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
  return EXIT.ok;
}

/**
 * @module cli/run-command
 * `fleetback-agent run`: the service's main loop. It returns only on SIGINT/SIGTERM (after
 * cancelling running jobs) or when the server ends the relationship (4001, 4003, HTTP 401), each
 * with its own exit status so the service manager and the operator can tell them apart.
 */
import { createAgent } from "../agent/agent.js";
import { loadAgentConfig } from "../config/agent-config.js";
import { ensurePrivateDir } from "../config/atomic-write.js";
import type { AgentPaths } from "../config/paths.js";
import { createJsonLogger, isLogLevel } from "../log/logger.js";
import type { CliDeps } from "./cli-deps.js";
import { EXIT, type ExitCode } from "./exit-codes.js";

export async function runCommand(deps: CliDeps, paths: AgentPaths): Promise<ExitCode> {
  const loaded = await loadAgentConfig(paths.configDir);
  if (!loaded.ok) {
    deps.err(`fleetback-agent: ${loaded.message}`);
    return EXIT.notEnrolled;
  }
  await ensurePrivateDir(paths.stateDir);
  const level = deps.env.FLEETBACK_AGENT_LOG_LEVEL ?? "info";
  const log = createJsonLogger({
    write: deps.logWrite,
    level: isLogLevel(level) ? level : "info",
    clock: deps.clock,
  });
  const agent = createAgent({
    config: loaded.config,
    stateDir: paths.stateDir,
    resticCommand: paths.restic,
    identity: deps.identity,
    agentVersion: deps.agentVersion,
    log,
    parentEnv: deps.env,
    runner: deps.runner,
    clock: deps.clock,
    timers: deps.timers,
    random: deps.random,
    openSocket: deps.openSocket,
  });
  log.info("agent starting", { version: deps.agentVersion, host_id: loaded.config.host_id });
  const removeSignalHandler = deps.onShutdownSignal(() => {
    log.info("stopping");
    void agent.stop();
  });
  try {
    const outcome = await agent.run();
    if (outcome.kind === "stopped") {
      return EXIT.ok;
    }
    deps.err(`fleetback-agent: ${outcome.message}`);
    return outcome.reason === "protocol_too_old" ? EXIT.protocolTooOld : EXIT.revoked;
  } finally {
    removeSignalHandler();
  }
}

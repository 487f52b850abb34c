/**
 * @module cli/run-command
 * `fleetback-agent run`: the service's main loop. It returns only on SIGINT/SIGTERM (after
 * cancelling running jobs) or when the server ends the relationship (4001, 4003, HTTP 401), each
 * with its own exit status so the service manager and the operator can tell them apart. Before
 * anything else it lets the launcher run an updated version instead (update/launcher.ts), and it
 * exits with 75 when a verified update waits for the restart.
 */
import { parsePublicKey } from "@fleetback/crypto";
import { JOB_KINDS } from "@fleetback/protocol";
import { createAgent } from "../agent/agent.js";
import { loadAgentConfig } from "../config/agent-config.js";
import { ensurePrivateDir } from "../config/atomic-write.js";
import { jobTimeoutsFromEnv } from "../config/job-timeouts.js";
import { type AgentPaths, installDirOf } from "../config/paths.js";
import { createJsonLogger, isLogLevel, type Logger } from "../log/logger.js";
import { unreachableAfterFromEnv } from "../restic/unreachable-watch.js";
import { updateDir } from "../update/boot-record.js";
import { nodeFileOps } from "../update/file-ops.js";
import { LAUNCHED_ENV, launch } from "../update/launcher.js";
import { createUpdatePlatform } from "../update/platform.js";
import { updateTrialFromEnv } from "../update/trial-watchdog.js";
import type { CliDeps } from "./cli-deps.js";
import { EXIT } from "./exit-codes.js";

/** The exit status of the version that ran instead of this one, or undefined to run this one. */
async function runLaunched(deps: CliDeps, paths: AgentPaths, log: Logger): Promise<number | undefined> {
  if (deps.launcher === undefined || deps.env[LAUNCHED_ENV]) {
    return undefined;
  }
  // The key lives in the config dir, which the state dir's writers cannot touch; an unreadable
  // config leaves it undefined, and then only the installed version runs.
  const config = await loadAgentConfig(paths.configDir).catch(() => undefined);
  const pinned = config?.ok ? config.config.release_public_key : undefined;
  const parsedKey = pinned === undefined ? undefined : parsePublicKey(pinned);
  const trial = updateTrialFromEnv(deps.env);
  if (trial.problem !== undefined) {
    log.warn(trial.problem);
  }
  const launched = await launch({
    selfVersion: deps.agentVersion,
    selfKind: deps.agentKind,
    args: deps.launcher.args,
    env: deps.env,
    platform: createUpdatePlatform({ dir: updateDir(paths.stateDir), fs: nodeFileOps }),
    fs: nodeFileOps,
    clock: deps.clock,
    timers: deps.timers,
    log,
    ports: deps.launcher.ports,
    releaseKey: parsedKey?.ok ? parsedKey.key : undefined,
    trialMs: trial.ms,
  }).catch((cause: unknown) => {
    // A broken update dir must never keep the installed version from running.
    log.error("the launcher failed; running the installed version", { error: String(cause) });
    return { kind: "self" } as const;
  });
  return launched.kind === "launched" ? launched.exitCode : undefined;
}

export async function runCommand(deps: CliDeps, paths: AgentPaths): Promise<number> {
  const level = deps.env.FLEETBACK_AGENT_LOG_LEVEL ?? "info";
  const log = createJsonLogger({
    write: deps.logWrite,
    level: isLogLevel(level) ? level : "info",
    clock: deps.clock,
  });
  const launchedExit = await runLaunched(deps, paths, log);
  if (launchedExit !== undefined) {
    return launchedExit;
  }
  const loaded = await loadAgentConfig(paths.configDir);
  if (!loaded.ok) {
    deps.err(`fleetback-agent: ${loaded.message}`);
    return EXIT.notEnrolled;
  }
  await ensurePrivateDir(paths.stateDir);
  const jobTimeouts = jobTimeoutsFromEnv(deps.env, JOB_KINDS);
  for (const problem of jobTimeouts.problems) {
    log.warn(problem);
  }
  const unreachableAfter = unreachableAfterFromEnv(deps.env);
  if (unreachableAfter.problem !== undefined) {
    log.warn(unreachableAfter.problem);
  }
  const agent = createAgent({
    config: loaded.config,
    stateDir: paths.stateDir,
    configDir: paths.configDir,
    installDir: installDirOf(deps.env, process.argv, process.execPath),
    resticCommand: paths.restic,
    identity: deps.identity,
    agentVersion: deps.agentVersion,
    agentKind: deps.agentKind,
    log,
    parentEnv: deps.env,
    runner: deps.runner,
    restoreSocket: deps.env.FLEETBACK_RESTORE_SOCKET || undefined,
    jobTimeouts: jobTimeouts.timeouts,
    repositoryUnreachableAfterMs: unreachableAfter.ms,
    treeIndexAfterBackup: deps.env.FLEETBACK_TREE_INDEX_AFTER_BACKUP !== "0",
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
    if (outcome.kind === "restart_for_update") {
      log.info("exiting for the update", { version: outcome.version, exit_code: EXIT.restartForUpdate });
      return EXIT.restartForUpdate;
    }
    deps.err(`fleetback-agent: ${outcome.message}`);
    return outcome.reason === "protocol_too_old" ? EXIT.protocolTooOld : EXIT.revoked;
  } finally {
    removeSignalHandler();
  }
}

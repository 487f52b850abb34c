/**
 * @module cli/cli-deps
 * Everything the CLI touches outside its arguments, in one object: the composition root
 * (cli.ts) passes the real process, tests pass captured output, manual timers and fake runners.
 */
import type { AgentKind } from "@fleetback/protocol";
import type { OpenSocket } from "../connection/agent-socket.js";
import { agentVersion, detectHostIdentity, type HostIdentity } from "../host-identity.js";
import type { ResticRunner } from "../restic/runner.js";
import { createSpawnRunner } from "../restic/spawn-adapter.js";
import { type Clock, systemClock } from "../time/clock.js";
import { systemTimers, type Timers } from "../time/timers.js";
import { detectAgentKind } from "../update/agent-kind.js";
import { type LaunchPorts, processLaunchPorts } from "../update/launch-ports.js";

export const CLAIM_POLL_INTERVAL_MS = 5_000;

export interface CliDeps {
  env: NodeJS.ProcessEnv;
  /** One line of human output on stdout (no newline needed). */
  out: (line: string) => void;
  /** One line of human output on stderr. */
  err: (line: string) => void;
  /** Raw JSON log lines of `run` (stderr). */
  logWrite: (line: string) => void;
  identity: HostIdentity;
  agentVersion: string;
  agentKind: AgentKind;
  /**
   * How `run` starts the version the boot record names (update/launcher.ts), with the process's
   * own arguments for a child. Absent: `run` always runs this version (tests).
   */
  launcher?: { ports: LaunchPorts; args: readonly string[] };
  clock: Clock;
  timers: Timers;
  claimPollIntervalMs: number;
  runner: ResticRunner;
  /** Registers the shutdown handler of `run` (SIGINT, SIGTERM); returns its removal. */
  onShutdownSignal: (handler: () => void) => () => void;
  random?: () => number;
  openSocket?: OpenSocket;
}

export function createProcessCliDeps(): CliDeps {
  return {
    env: process.env,
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    logWrite: (line) => process.stderr.write(line),
    identity: detectHostIdentity(),
    agentVersion: agentVersion(),
    agentKind: detectAgentKind(),
    launcher: { ports: processLaunchPorts, args: process.argv.slice(2) },
    clock: systemClock,
    timers: systemTimers,
    claimPollIntervalMs: CLAIM_POLL_INTERVAL_MS,
    runner: createSpawnRunner(),
    onShutdownSignal(handler) {
      process.on("SIGINT", handler);
      process.on("SIGTERM", handler);
      return () => {
        process.off("SIGINT", handler);
        process.off("SIGTERM", handler);
      };
    },
  };
}

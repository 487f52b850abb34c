/**
 * @module cli/run-cli
 * The CLI's dispatcher: parses argv, resolves the agent's directories and runs one command.
 * Returns the exit status instead of exiting, so tests drive it in-process.
 */
import { resolveAgentPaths } from "../config/paths.js";
import { announceCommand } from "./announce-command.js";
import { parseArgv } from "./argv.js";
import type { CliDeps } from "./cli-deps.js";
import { enrollCommand } from "./enroll-command.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { HELP } from "./help.js";
import { restoreHelperCommand } from "./restore-helper-command.js";
import { runCommand } from "./run-command.js";
import { statusCommand } from "./status-command.js";

/** The exit status: one of EXIT, or whatever an updated version that `run` launched exited with. */
export async function runCli(argv: readonly string[], deps: CliDeps): Promise<ExitCode | number> {
  const parsed = parseArgv(argv);
  if (!parsed.ok) {
    deps.err(`fleetback-agent: ${parsed.message} (see fleetback-agent --help)`);
    return EXIT.usage;
  }
  const paths = resolveAgentPaths(parsed.flags, deps.env);
  try {
    switch (parsed.command) {
      case "help":
        deps.out(HELP.trimEnd());
        return EXIT.ok;
      case "version":
        deps.out(deps.agentVersion);
        return EXIT.ok;
      case "enroll":
        return await enrollCommand(deps, parsed.flags, paths);
      case "announce":
        return await announceCommand(deps, parsed.flags, paths);
      case "run":
        return await runCommand(deps, paths);
      case "status":
        return await statusCommand(deps, paths);
      case "restore-helper":
        return await restoreHelperCommand(deps, paths, parsed.flags.socket);
    }
  } catch (cause) {
    // File system trouble mostly (a read-only or foreign-owned config dir): one line, no stack.
    deps.err(`fleetback-agent: ${cause instanceof Error ? cause.message : String(cause)}`);
    return EXIT.failure;
  }
}

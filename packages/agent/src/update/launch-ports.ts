/**
 * @module update/launch-ports
 * How the launcher runs another version. A bundle is imported into this very process (no second
 * Node.js, nothing to forward); a single executable is a child process with inherited stdio,
 * SIGTERM/SIGINT passed on and its exit status passed back, so the service manager sees one
 * agent either way.
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { pathToFileURL } from "node:url";

export interface ArtefactProcess {
  /** The version's exit status once it is done. */
  exited: Promise<number>;
  /** Ends it early (trial deadline); `code` is what this process exits with. */
  terminate(code: number): void;
}

export interface LaunchPorts {
  importBundle(path: string): ArtefactProcess;
  spawnExecutable(path: string, args: readonly string[], env: NodeJS.ProcessEnv): ArtefactProcess;
}

const FORWARDED_SIGNALS = ["SIGTERM", "SIGINT"] as const;

export const processLaunchPorts: LaunchPorts = {
  importBundle(path) {
    return {
      // The bundle's entry sets process.exitCode once its top-level `await runCli(...)` is done.
      exited: import(pathToFileURL(path).href).then(() => {
        const code = Number(process.exitCode ?? 0);
        return Number.isInteger(code) ? code : 1;
      }),
      // Nothing else stops a module running in this process.
      terminate: (code) => process.exit(code),
    };
  },
  spawnExecutable(path, args, env) {
    const child = spawn(path, [...args], { stdio: "inherit", env });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    for (const signal of FORWARDED_SIGNALS) {
      process.on(signal, forward);
    }
    const stopForwarding = () => {
      for (const signal of FORWARDED_SIGNALS) {
        process.off(signal, forward);
      }
    };
    const exited = new Promise<number>((resolve, reject) => {
      child.on("error", (cause) => {
        stopForwarding();
        reject(cause);
      });
      child.on("exit", (code, signal) => {
        stopForwarding();
        resolve(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1));
      });
    });
    return { exited, terminate: () => child.kill("SIGTERM") };
  },
};

/**
 * @module support/run-to-exit
 * Runs a Node script as its own process to its end, with its output: a server that must fail to
 * start, a command-line tool. Killed, and the test failed, when it outlasts `timeoutMs`.
 */
import { spawn } from "node:child_process";

export interface ExitedProcess {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runToExit(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<ExitedProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(
          `${args.join(" ")} did not exit within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`,
        ),
      );
    }, timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

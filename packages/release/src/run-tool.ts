/**
 * @module run-tool
 * Runs a build tool (node, postject, codesign) to completion and keeps its output for the error
 * message: the tools print progress and warnings that only matter when they fail.
 */
import { execFile } from "node:child_process";

export interface ToolResult {
  stdout: string;
  stderr: string;
}

export function runTool(
  file: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { ...options, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          const output = `${stdout}${stderr}`.trim();
          reject(
            new Error(`${[file, ...args].join(" ")} failed: ${error.message}${output ? `\n${output}` : ""}`),
          );
          return;
        }
        resolve({ stdout, stderr });
      },
    );
  });
}

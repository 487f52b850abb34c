#!/usr/bin/env node
// Runs the command it is given (the root test command's scripts/test-lanes.mjs, which runs turbo),
// then scripts/test-summary.mjs whatever that command's outcome, and exits with the worse of the
// two codes. With `&&` a failing turbo skipped the summary, so a red run ended without the list
// of what failed and which packages never reported (issue 32); with `--continue` every package
// still runs and reports, and this prints the summary over all of them.
import { spawnSync } from "node:child_process";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { exitCodeOf } from "./exit-code.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

/** An exit code for a child: 1 when it could not start, else as a shell reports it. */
function codeOf(result) {
  if (result.error) {
    console.error(`run-tests: ${result.error.message}`);
    return 1;
  }
  return exitCodeOf(result.status, result.signal);
}

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node scripts/run-tests.mjs <command> [args…]");
  process.exit(2);
}
// The workspace's binaries (turbo) come first, as under `pnpm test`, also when run by hand.
const env = { ...process.env, PATH: [join(root, "node_modules", ".bin"), process.env.PATH].join(delimiter) };
const run = codeOf(spawnSync(command, args, { cwd: root, env, stdio: "inherit" }));
const summary = codeOf(
  spawnSync(process.execPath, [join(root, "scripts", "test-summary.mjs")], {
    cwd: root,
    env,
    stdio: "inherit",
  }),
);
if (run !== 0 && summary === 0) {
  // Every report passed yet a task failed: one that writes no report, such as a typecheck.
  console.log(`${[command, ...args].join(" ")} exited ${run}: see the tasks on turbo's "Failed:" line above`);
}
process.exit(Math.max(run, summary));

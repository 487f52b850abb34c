#!/usr/bin/env node
// The root test command's tasks in two lanes (the suite's run on 2 cores). Every package was
// started at once by one turbo: nine test runs of two workers each, nine type checks and the
// end-to-end suite's servers, agents and Chromium, a load of 15-20 on two cores. The end-to-end
// suite, the run's longest path, then took 24 minutes and tests met their hang guards. Now:
//   1. every package is built once, alone (`turbo run build`);
//   2. the end-to-end suite's type check and tests run in one lane from the start;
//   3. beside it, every other package's type check and tests, at most FLEETBACK_TEST_LANE_TASKS
//      (default 3) at a time.
// `--only` keeps the lanes from building again: both would write the same dist folders while
// the other's tests read them. Both lanes always run to the end (`--continue`); the exit code is
// the worse of the two, so scripts/run-tests.mjs still prints the summary over every package.
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { exitCodeOf } from "./exit-code.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const E2E = "@fleetback/e2e";
const otherTasks = process.env.FLEETBACK_TEST_LANE_TASKS ?? "3";
if (!/^[1-9][0-9]?$/.test(otherTasks)) {
  console.error(`test-lanes: FLEETBACK_TEST_LANE_TASKS must be a number from 1 to 99, not ${otherTasks}`);
  process.exit(2);
}

function lane(args) {
  return new Promise((resolve) => {
    const child = spawn("turbo", args, { cwd: root, stdio: "inherit" });
    child.on("error", (error) => {
      console.error(`test-lanes: turbo ${args.join(" ")}: ${error.message}`);
      resolve(1);
    });
    child.on("exit", (status, signal) => resolve(exitCodeOf(status, signal)));
  });
}

const build = spawnSync("turbo", ["run", "build", "--output-logs=errors-only"], {
  cwd: root,
  stdio: "inherit",
});
if (build.error || build.status !== 0) {
  console.error(
    `test-lanes: the build failed (${build.error?.message ?? `exit ${exitCodeOf(build.status, build.signal)}`}); no test ran`,
  );
  process.exit(build.error ? 1 : exitCodeOf(build.status, build.signal));
}

const codes = await Promise.all([
  lane(["run", "typecheck", "test", "--only", "--continue", `--filter=${E2E}`]),
  lane([
    "run",
    "typecheck",
    "test",
    "--only",
    "--continue",
    `--filter=!${E2E}`,
    `--concurrency=${otherTasks}`,
  ]),
]);
process.exit(Math.max(...codes));

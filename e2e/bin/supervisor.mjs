#!/usr/bin/env node
// Stands in for systemd's `Restart=always` in e2e tests: runs the command after `--`, and whenever
// it exits, for any reason and with any status, starts it again after RESTART_MS (systemd's
// RestartSec, shortened). Prints `supervisor: start <n>` before each start and
// `supervisor: exit <n> code=<code> signal=<signal>` after each exit, so a test can count restarts.
// SIGTERM/SIGINT stop the child (forwarded) and then the supervisor, like `systemctl stop`.
import { spawn } from "node:child_process";

const RESTART_MS = Number(process.env.SUPERVISOR_RESTART_MS ?? 300);
const separator = process.argv.indexOf("--");
const [command, ...args] = separator === -1 ? [] : process.argv.slice(separator + 1);
if (!command) {
  process.stderr.write("usage: supervisor.mjs -- COMMAND [ARGS...]\n");
  process.exit(2);
}

let child;
let stopping = false;
let starts = 0;

function start() {
  starts += 1;
  const n = starts;
  process.stdout.write(`supervisor: start ${n}\n`);
  child = spawn(command, args, { stdio: "inherit" });
  child.once("exit", (code, signal) => {
    process.stdout.write(`supervisor: exit ${n} code=${code} signal=${signal}\n`);
    child = undefined;
    if (stopping) {
      process.exit(0);
    }
    setTimeout(start, RESTART_MS);
  });
}

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    stopping = true;
    if (child) {
      child.kill(signal);
    } else {
      process.exit(0);
    }
  });
}

start();

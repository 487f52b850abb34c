#!/usr/bin/env node
// Stands in for systemd in e2e tests: runs the command after `--` and applies the restart rules of
// the unit file given with `--unit FILE` (the unit the installer generates): `Restart=` (always,
// on-failure, no) and `RestartPreventExitStatus=`, so an agent that exits revoked or too old stays
// down exactly as on a host, and one that exits 75 for an update is started again. RestartSec is
// shortened to SUPERVISOR_RESTART_MS. Prints `supervisor: start <n>` before each start,
// `supervisor: exit <n> code=<code> signal=<signal>` after each exit, and
// `supervisor: not restarting (<why>)` when the rules say so; then it exits with the child's code.
// SIGTERM/SIGINT stop the child (forwarded) and then the supervisor, like `systemctl stop`.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const RESTART_MS = Number(process.env.SUPERVISOR_RESTART_MS ?? 300);
const separator = process.argv.indexOf("--");
const unitFlag = process.argv.indexOf("--unit");
const unitFile = unitFlag !== -1 && unitFlag < separator ? process.argv[unitFlag + 1] : undefined;
const [command, ...args] = separator === -1 ? [] : process.argv.slice(separator + 1);
if (!command || !unitFile) {
  process.stderr.write("usage: supervisor.mjs --unit UNIT_FILE -- COMMAND [ARGS...]\n");
  process.exit(2);
}

/** The [Service] settings that decide restarts; the last assignment wins, an empty one resets. */
function restartRules(text) {
  let section = "";
  let restart = "no";
  let prevent = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("[")) {
      section = line;
    } else if (section === "[Service]" && line.startsWith("Restart=")) {
      restart = line.slice("Restart=".length);
    } else if (section === "[Service]" && line.startsWith("RestartPreventExitStatus=")) {
      const value = line.slice("RestartPreventExitStatus=".length).trim();
      prevent = value === "" ? [] : [...prevent, ...value.split(/\s+/)];
    }
  }
  return { restart, prevent };
}

const rules = restartRules(readFileSync(unitFile, "utf8"));

function whyNot(code, signal) {
  if (code !== null && rules.prevent.includes(String(code))) {
    return `exit status ${code} is in RestartPreventExitStatus`;
  }
  if (signal !== null && rules.prevent.includes(signal)) {
    return `signal ${signal} is in RestartPreventExitStatus`;
  }
  if (rules.restart === "always") {
    return undefined;
  }
  if (rules.restart === "on-failure" && (code !== 0 || signal !== null)) {
    return undefined;
  }
  return `Restart=${rules.restart}`;
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
    const why = whyNot(code, signal);
    if (why !== undefined) {
      process.stdout.write(`supervisor: not restarting (${why})\n`);
      process.exit(code ?? 1);
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

/**
 * @module testing/processes
 * Whether a process still runs. `process.kill(pid, 0)` also succeeds for a zombie (dead, not yet
 * reaped by its new parent; in containers PID 1 may reap only every few seconds), so on Linux a
 * zombie counts as gone.
 */

import { readFileSync } from "node:fs";
import { systemClock } from "../time/clock.js";
import { sleep, systemTimers } from "../time/timers.js";

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S ..." where S is the state letter; comm may contain spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}

// The default bound is a hang guard for a loaded machine (5 s was missed there, issue 32); the
// test's own timeout usually ends a hang first.
export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = systemClock.now().getTime() + timeoutMs;
  while (!(await check())) {
    if (systemClock.now().getTime() > deadline) {
      throw new Error("condition not met in time");
    }
    await sleep(systemTimers, 20);
  }
}

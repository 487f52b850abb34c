/**
 * @module reap-children
 * A bench that fails half-way (a budget case throws, a server never answers) used to leave its
 * server, agent and rest-server running, holding ports and CPU that the next run then measured
 * beside. When this process exits, for whatever reason, every direct child still running is
 * killed. Linux only, like the rest of the bench's /proc readings.
 */
import { readdirSync, readFileSync } from "node:fs";

/** The pids whose parent is `parent`, from /proc/<pid>/stat. */
export function childPids(parent: number = process.pid): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command name (field 2) may hold spaces; ppid is the second field after its ")".
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === parent) {
        pids.push(Number(entry));
      }
    } catch {
      // Gone between readdir and read.
    }
  }
  return pids;
}

/** Kills every child still running when this process exits. */
export function reapChildrenOnExit(): void {
  process.once("exit", () => {
    for (const pid of childPids()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  });
}

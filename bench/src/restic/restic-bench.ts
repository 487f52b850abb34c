/**
 * @module restic/restic-bench
 * The cases that need the real parts: one rest-server, the built server (PGlite) and one real
 * agent running restic 0.18. The agent's idle RSS (B8) is read once it is online and quiet, then
 * B1 (backup against bare restic) and B4 (the restore browser on a 200,000-file snapshot) run.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import type { BudgetRow } from "../budgets.js";
import { startServerChild } from "../fleet/server-child.js";
import { benchApi, startAgentHost } from "./agent-host.js";
import { runBackupBench } from "./backup-bench.js";
import { runBrowseBench } from "./browse-bench.js";
import { assertToolsPresent, startRestServer } from "./tools.js";

/** RSS of a bare Node process that only waits: the floor any Node agent starts from. */
async function bareNodeRssBytes(): Promise<number> {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" });
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const status = await readFile(`/proc/${child.pid}/status`, "utf8");
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) * 1024;
  } finally {
    child.kill();
  }
}

export async function runResticBench(): Promise<{ rows: BudgetRow[]; notes: string[] }> {
  assertToolsPresent();
  const rest = await startRestServer();
  const server = await startServerChild({ embedded: true });
  try {
    const api = benchApi(server.url, server.apiToken);
    const host = await startAgentHost(server.url, api, rest, "bench-host");
    try {
      await new Promise((resolve) => setTimeout(resolve, 5000));
      const idle = await host.memory();
      const bare = await bareNodeRssBytes();
      const rows: BudgetRow[] = [
        {
          id: "B8",
          engine: "none",
          case: "agent idle RSS, online",
          measured: idle.rssBytes / 2 ** 20,
          unit: "MiB",
          baselineName: "bare node",
          baseline: bare / 2 ** 20,
          budget: 60,
        },
      ];
      const backup = await runBackupBench(api, rest, host, () => server.cpuMs());
      const browse = await runBrowseBench(api, host);
      const notes = [...backup.notes, ...browse.notes];
      process.stdout.write(`\n${notes.join("\n")}\n`);
      return { rows: [...rows, ...backup.rows, ...browse.rows], notes };
    } finally {
      await host.stop();
    }
  } finally {
    await server.stop();
    await rest.stop();
  }
}

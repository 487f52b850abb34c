/**
 * @module restic/browse-bench
 * B4: the restore browser on a ~200,000-file snapshot, through the API the wizard's tree uses
 * (`GET /api/hosts/{id}/tree`): the first folder (the backed-up path, as the wizard opens it),
 * twenty later folders one level and two levels down, the same twenty again from the server's
 * cache, and the agent's peak RSS. The baseline is bare `restic ls` of the first folder.
 */
import type { BudgetRow } from "../budgets.js";
import { type AgentHost, type BenchApi, until } from "./agent-host.js";
import { createGroup, restic, runNow } from "./backup-bench.js";
import { BROWSE_TREE, ensureTree } from "./trees.js";

interface TreeAnswer {
  entries: unknown[];
  cached: boolean;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export async function runBrowseBench(
  api: BenchApi,
  host: AgentHost,
): Promise<{ rows: BudgetRow[]; notes: string[] }> {
  const tree = await ensureTree(BROWSE_TREE);
  const groupId = await createGroup(api, host.hostId, "b4", tree.root);
  const backup = await runNow(api, host.hostId, groupId, 900_000);
  const snapshotId = await until(
    "the B4 snapshot in the host's list",
    120_000,
    async () => {
      const { snapshots } = await api.get<{ snapshots: Array<{ id: string; paths: string[] }> }>(
        `/api/hosts/${host.hostId}/snapshots`,
      );
      return snapshots.find((snapshot) => snapshot.paths.includes(tree.root))?.id;
    },
    200,
  );

  const open = async (path: string) => {
    const started = performance.now();
    const answer = await api.get<TreeAnswer>(
      `/api/hosts/${host.hostId}/tree?snapshot_id=${snapshotId}&path=${encodeURIComponent(path)}`,
    );
    if (answer.entries.length === 0) {
      throw new Error(`B4: ${path} listed no entries`);
    }
    return { ms: performance.now() - started, cached: answer.cached };
  };

  const first = await open(tree.root);
  const later: string[] = [];
  for (let f = 0; f < 10; f++) {
    const folder = `${tree.root}/f${String(f).padStart(3, "0")}`;
    later.push(folder, `${folder}/s${String(f * 7).padStart(3, "0")}`);
  }
  const laterMs: number[] = [];
  for (const path of later) {
    laterMs.push((await open(path)).ms);
  }
  const cachedMs: number[] = [];
  for (const path of later) {
    const again = await open(path);
    if (!again.cached) {
      throw new Error(`B4: ${path} opened a second time was not answered from the server's cache`);
    }
    cachedMs.push(again.ms);
  }
  const memory = await host.memory();
  const bare = await restic(["ls", snapshotId, tree.root], host.repository);

  const rows: BudgetRow[] = [
    {
      id: "B4",
      case: `restore browser, ${tree.files.toLocaleString("en")}-file snapshot: first folder`,
      measured: first.ms,
      unit: "ms",
      baselineName: "bare restic ls of that folder",
      baseline: bare.wallMs,
      budget: 1500,
    },
    {
      id: "B4",
      case: "later folders (20 others, p90)",
      measured: percentile(laterMs, 90),
      unit: "ms",
      baselineName: "the first folder",
      baseline: first.ms,
      budget: 50,
    },
    {
      id: "B4",
      case: "the same folders again, server-cached (p90)",
      measured: percentile(cachedMs, 90),
      unit: "ms",
      baselineName: "the first folder",
      baseline: first.ms,
      budget: 20,
    },
    {
      id: "B4",
      case: "agent peak RSS after browsing",
      measured: memory.peakBytes / 2 ** 20,
      unit: "MiB",
      baselineName: "–",
      baseline: Number.NaN,
      budget: 150,
    },
  ];
  const notes = [
    `B4: the ${tree.files.toLocaleString("en")}-file tree backed up through Fleetback in ${(backup.wallMs / 1000).toFixed(1)} s; later folders median ${percentile(laterMs, 50).toFixed(1)} ms, max ${Math.max(...laterMs).toFixed(1)} ms; cached median ${percentile(cachedMs, 50).toFixed(1)} ms; agent RSS now ${(memory.rssBytes / 2 ** 20).toFixed(1)} MiB`,
  ];
  notes.push(`B4: later folders in click order (ms): ${laterMs.map((ms) => ms.toFixed(0)).join(", ")}`);
  return { rows, notes };
}

/**
 * @module run
 * `pnpm bench`: runs every case and prints speed as ratios against baselines measured in the
 * same run, plus memory: the bench process's after the in-process cases, and the server's with a
 * simulated fleet online (fleet/fleet-bench.ts; FLEETBACK_BENCH_HOSTS hosts, default 1,000, 0 skips
 * it; on PGlite, and again on PostgreSQL when FLEETBACK_BENCH_DATABASE_URL is set), a fleet of
 * FLEETBACK_BENCH_ARRIVAL_HOSTS agents (default 10,000, 0 skips it; both engines likewise)
 * reconnecting with the real agent's backoff (fleet/fleet-arrival.ts), the fleet
 * health evaluation of FLEETBACK_BENCH_GROUPS source groups (default 10,000, 0 skips it;
 * health/freshness-bench.ts), a policy change over FLEETBACK_BENCH_POLICY_HOSTS hosts under 50
 * policies (default 10,000, 0 skips it; cases/policy-fleet.ts), the digest of
 * FLEETBACK_BENCH_DIGEST_HOSTS hosts (default 5,000, 0 skips it; cases/digest-fleet.ts), the
 * embedded database's upkeep over FLEETBACK_BENCH_UPKEEP_ROUNDS replacements (default 1,000, 0
 * skips it; health/embedded-upkeep-bench.ts), the file catalogue of FLEETBACK_BENCH_CATALOGUE_HOSTS
 * hosts with 30 snapshots of 100,000 files each (default 200, 0 skips it; cases/catalogue-fleet.ts),
 * the start and idle-memory budgets of the built server (startup/startup-bench.ts;
 * FLEETBACK_BENCH_STARTUP=0 skips them), and the cases with a real agent, restic 0.18 and
 * rest-server: B1's backup, B4's restore browser and the agent's idle memory
 * (restic/restic-bench.ts; FLEETBACK_BENCH_RESTIC=0 skips them). The budget rows are printed as
 * one table and written, with every other result, to bench/results.json, from which
 * `pnpm --filter @fleetback/bench run table` writes the table of docs/DEVELOPMENT.md.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BudgetRow, formatBudgets, writeResults } from "./budgets.js";
import { runCatalogueFleetBench } from "./cases/catalogue-fleet.js";
import { cryptoCases } from "./cases/crypto.js";
import { runDigestFleetBench } from "./cases/digest-fleet.js";
import { runPolicyFleetBench } from "./cases/policy-fleet.js";
import { protocolCases } from "./cases/protocol.js";
import { runFleetArrivalBench } from "./fleet/fleet-arrival.js";
import { runFleetBench } from "./fleet/fleet-bench.js";
import { type BenchResult, formatResults, runCase } from "./harness.js";
import { runEmbeddedUpkeepBench } from "./health/embedded-upkeep-bench.js";
import { runFreshnessBench } from "./health/freshness-bench.js";
import { reapChildrenOnExit } from "./reap-children.js";
import { runResticBench } from "./restic/restic-bench.js";
import { runStartupBench } from "./startup/startup-bench.js";

reapChildrenOnExit();
const resultsPath = join(dirname(fileURLToPath(import.meta.url)), "..", "results.json");
const budgets: BudgetRow[] = [];
const allResults: BenchResult[] = [];
const allNotes: string[] = [];

const cases = [...protocolCases(), ...cryptoCases()];
const results = cases.map((bench) => runCase(bench));
allResults.push(...results);
process.stdout.write(`${formatResults(results)}\n`);
const memory = process.memoryUsage();
process.stdout.write(
  `\nmemory: rss ${(memory.rss / 2 ** 20).toFixed(1)} MiB, heap used ${(memory.heapUsed / 2 ** 20).toFixed(1)} MiB\n`,
);

/** A fleet size from the environment: a whole number, 0 to skip the case. */
function sizeFromEnv(variable: string, fallback: number): number {
  const raw = process.env[variable];
  const size = Number(raw ?? String(fallback));
  if (!Number.isSafeInteger(size) || size < 0) {
    throw new Error(`${variable} must be a whole number, not "${raw}"`);
  }
  return size;
}

/** Runs a sized case unless its size is 0, and prints and keeps what it measured. */
async function sizedCase(
  variable: string,
  fallback: number,
  run: (size: number) => Promise<{ results: BenchResult[]; budgets?: BudgetRow[]; notes: string[] }>,
): Promise<void> {
  const size = sizeFromEnv(variable, fallback);
  if (size === 0) {
    return;
  }
  const report = await run(size);
  allResults.push(...report.results);
  budgets.push(...(report.budgets ?? []));
  allNotes.push(...report.notes);
  process.stdout.write(`\n${formatResults(report.results)}\n\n${report.notes.join("\n")}\n`);
}

// Most installs start on the embedded database: the fleet runs on PGlite first, then on the
// PostgreSQL of FLEETBACK_BENCH_DATABASE_URL when one is named (each PostgreSQL case makes a
// database of its own there, scratch-database.ts).
await sizedCase("FLEETBACK_BENCH_HOSTS", 1000, (hosts) => runFleetBench(hosts, { embedded: true }));
if (process.env.FLEETBACK_BENCH_DATABASE_URL) {
  await sizedCase("FLEETBACK_BENCH_HOSTS", 1000, (hosts) => runFleetBench(hosts));
}
// B2 at fleet scale: the whole fleet reconnecting as real agents do, on both engines.
await sizedCase("FLEETBACK_BENCH_ARRIVAL_HOSTS", 10_000, (hosts) =>
  runFleetArrivalBench(hosts, { embedded: true }),
);
if (process.env.FLEETBACK_BENCH_DATABASE_URL) {
  await sizedCase("FLEETBACK_BENCH_ARRIVAL_HOSTS", 10_000, (hosts) => runFleetArrivalBench(hosts));
}
await sizedCase("FLEETBACK_BENCH_GROUPS", 10_000, runFreshnessBench);
await sizedCase("FLEETBACK_BENCH_POLICY_HOSTS", 10_000, runPolicyFleetBench);
await sizedCase("FLEETBACK_BENCH_DIGEST_HOSTS", 5000, runDigestFleetBench);
await sizedCase("FLEETBACK_BENCH_UPKEEP_ROUNDS", 1000, runEmbeddedUpkeepBench);
await sizedCase("FLEETBACK_BENCH_CATALOGUE_HOSTS", 200, runCatalogueFleetBench);

if (process.env.FLEETBACK_BENCH_RESTIC !== "0") {
  const restic = await runResticBench();
  budgets.push(...restic.rows);
  allNotes.push(...restic.notes);
}

if (process.env.FLEETBACK_BENCH_STARTUP !== "0") {
  const startup = await runStartupBench();
  budgets.push(...startup.rows);
  allNotes.push(...startup.notes);
}

if (budgets.length > 0) {
  process.stdout.write(`\nbudgets (issues 19 and 37)\n${formatBudgets(budgets)}\n`);
}
await writeResults(resultsPath, budgets, { cases: allResults, notes: allNotes });
process.stdout.write(`\nwrote ${resultsPath}\n`);

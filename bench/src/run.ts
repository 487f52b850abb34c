/**
 * @module run
 * `pnpm bench`: runs every case and prints speed as ratios against baselines measured in the
 * same run, plus the process's memory at the end.
 */
import { cryptoCases } from "./cases/crypto.js";
import { protocolCases } from "./cases/protocol.js";
import { formatResults, runCase } from "./harness.js";

const cases = [...protocolCases(), ...cryptoCases()];
const results = cases.map((bench) => runCase(bench));
process.stdout.write(`${formatResults(results)}\n`);
const memory = process.memoryUsage();
process.stdout.write(
  `\nmemory: rss ${(memory.rss / 2 ** 20).toFixed(1)} MiB, heap used ${(memory.heapUsed / 2 ** 20).toFixed(1)} MiB\n`,
);

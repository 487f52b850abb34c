#!/usr/bin/env node
// Measures tree.list on a real snapshot: the first (direct) answer, the background index build,
// later answers from the index, and this process's RSS throughout. Run after `pnpm build`:
//   node scripts/tree-bench.mjs <restic binary> <repository> <password> <snapshot> <dir> [<dir>...]
import { mkdtemp, readdir, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCredentialStore } from "../dist/restic/credential-store.js";
import { createRestic } from "../dist/restic/restic.js";
import { createSpawnRunner } from "../dist/restic/spawn-adapter.js";
import { systemClock } from "../dist/time/clock.js";
import { createTreeBrowser, indexRootOf } from "../dist/tree/tree-browser.js";

const [binary, repository, password, snapshot, ...dirs] = process.argv.slice(2);
if (!binary || !repository || !password || !snapshot || dirs.length === 0) {
  console.error("usage: tree-bench.mjs <restic> <repository> <password> <snapshot> <dir>...");
  process.exit(2);
}
const mib = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const stateDir = await mkdtemp(join(tmpdir(), "fleetback-tree-bench-"));
const credentials = createCredentialStore();
credentials.setRepository("repo", { url: repository, password });
const log = {
  debug() {},
  info: (m, f) => console.error(m, JSON.stringify(f)),
  warn: console.error,
  error: console.error,
};
const restic = createRestic({
  runner: createSpawnRunner(),
  command: binary,
  stateDir,
  parentEnv: process.env,
});
const browser = createTreeBrowser({
  restic,
  credentials,
  stateDir,
  agentDirs: [stateDir],
  clock: systemClock,
  log,
});

global.gc?.();
const baselineHeap = process.memoryUsage().heapUsed;
console.log(`heap used at start: ${mib(baselineHeap)} MiB`);
const baseline = process.memoryUsage().rss;
let peak = baseline;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 10);

const timed = async (path) => {
  const start = performance.now();
  const result = await browser.list({ snapshot_id: snapshot, path });
  return { ms: performance.now() - start, result };
};

const first = await timed(dirs[0]);
console.log(
  `first answer (direct ls) ${dirs[0]}: ${first.ms.toFixed(0)} ms, ${first.result.entries?.length ?? first.result.error} entries`,
);
const buildStart = performance.now();
await browser.idle();
console.log(`index build finished ${(performance.now() - buildStart).toFixed(0)} ms after the first answer`);
const root = indexRootOf(stateDir);
for (const name of await readdir(root)) {
  const files = await readdir(join(root, name));
  const sizes = await Promise.all(
    files.map(async (file) => [file, (await stat(join(root, name, file))).size]),
  );
  console.log(`index ${name}: ${sizes.map(([file, size]) => `${file} ${mib(size)} MiB`).join(", ")}`);
}
for (const dir of dirs) {
  const runs = [];
  let result;
  for (let i = 0; i < 5; i += 1) {
    const one = await timed(dir);
    runs.push(one.ms);
    result = one.result;
  }
  runs.sort((a, b) => a - b);
  console.log(
    `from index ${dir}: median ${runs[2].toFixed(1)} ms (min ${runs[0].toFixed(1)}), ${result.entries?.length ?? result.error} entries`,
  );
}
clearInterval(sampler);
const heapBefore = process.memoryUsage().heapUsed;
global.gc?.();
console.log(
  `heap used: ${mib(heapBefore)} MiB, after gc ${mib(process.memoryUsage().heapUsed)} MiB (run with --expose-gc)`,
);
console.log(
  `agent RSS: baseline ${mib(baseline)} MiB, peak ${mib(peak)} MiB (+${mib(peak - baseline)}), now ${mib(process.memoryUsage().rss)} MiB`,
);
await browser.stop();

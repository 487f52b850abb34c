#!/usr/bin/env node
// Regenerates the README's screenshots (docs/screenshots/fleet.png, job.png, restore.png) from a
// real run: e2e/src/pages-browser.test.ts starts the built server, a real agent with restic 0.18
// and rest-server, makes a backup, and its first test photographs the host list, the backup's job
// page and the restore browser at 1280 px into .cache/screenshots/pages/. This script runs that
// test alone (not the whole page sweep) and copies the three pictures. Needs what the e2e tests
// need: the built packages, the fetched tools (scripts/fetch-tools.sh) and Chromium.
//   node scripts/screenshots.mjs
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const shots = join(root, ".cache", "screenshots", "pages");
const target = join(root, "docs", "screenshots");
const NAMES = ["fleet", "job", "restore"];
/** The README should stay light: a picture over this is a sign the page grew, not a photo to keep. */
const MAX_BYTES = 300 * 1024;

const began = Date.now();
const run = spawnSync(
  "npx",
  ["vitest", "run", "src/pages-browser.test.ts", "-t", "photographs the host list"],
  { cwd: join(root, "e2e"), stdio: "inherit" },
);

mkdirSync(target, { recursive: true });
let failed = run.status !== 0;
for (const name of NAMES) {
  const from = join(shots, `${name}.png`);
  let stat;
  try {
    stat = statSync(from);
  } catch {
    console.error(`screenshots: the sweep wrote no ${from}`);
    failed = true;
    continue;
  }
  if (stat.mtimeMs < began) {
    console.error(`screenshots: ${from} is from an earlier run; not copied`);
    failed = true;
    continue;
  }
  if (stat.size > MAX_BYTES) {
    console.error(`screenshots: ${name}.png is ${stat.size} bytes, over ${MAX_BYTES}; not copied`);
    failed = true;
    continue;
  }
  copyFileSync(from, join(target, `${name}.png`));
  console.log(`screenshots: docs/screenshots/${name}.png (${Math.round(stat.size / 1024)} KiB)`);
}
if (run.status !== 0) {
  console.error("screenshots: the test failed (see above); only fresh pictures were copied");
}
process.exit(failed ? 1 : 0);

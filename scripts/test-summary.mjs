#!/usr/bin/env node
// Sums the vitest JSON reports of every package into one closing line, and fails when a package
// ran no test at all (an empty run must never pass silently). `--reset` clears old reports first.
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = join(fileURLToPath(new URL("..", import.meta.url)), ".cache", "test-results");
if (process.argv.includes("--reset")) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  process.exit(0);
}
let passed = 0;
let failed = 0;
let skipped = 0;
const empty = [];
const files = readdirSync(dir).filter((f) => f.endsWith(".json"));
for (const file of files) {
  const report = JSON.parse(readFileSync(join(dir, file), "utf8"));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + (report.numTodoTests ?? 0);
  if (report.numTotalTests === 0) {
    empty.push(file.replace(/\.json$/, ""));
  }
  for (const suite of report.testResults ?? []) {
    if (suite.status === "failed" && suite.assertionResults?.length === 0) {
      failed += 1; // a test file that failed to load counts as a failure
    }
  }
}
console.log(`packages tested: ${files.map((f) => f.replace(/\.json$/, "")).join(", ")}`);
if (empty.length > 0) {
  console.log(`packages with no test: ${empty.join(", ")}`);
}
console.log(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || files.length === 0 || empty.length > 0 ? 1 : 0);

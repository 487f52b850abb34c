#!/usr/bin/env node
// Sums the vitest JSON reports of every package into one closing line, and fails when a package
// ran no test at all (an empty run must never pass silently). `--reset` clears old reports first.
// Every skipped test is listed (package, file, full name; its title says why). Under CI=true a
// skipped test is a failure unless it matches scripts/skip-allowlist.txt, whose every entry says
// why that test cannot run there. FLEETBACK_TEST_RESULTS_DIR and FLEETBACK_SKIP_ALLOWLIST replace
// the report directory and the allow-list (for the tests of this script).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

function isCi(env) {
  return /^(true|1)$/i.test(env.CI ?? "");
}

/**
 * The allow-list: `# why` comment lines, each entry a full-name pattern (`*` for any text) on its
 * own line below its comment. An entry without a comment directly above it is a problem.
 */
export function parseAllowList(text) {
  const entries = [];
  const problems = [];
  let why = [];
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "") {
      why = [];
    } else if (line.startsWith("#")) {
      why.push(line.replace(/^#\s*/, ""));
    } else if (why.length === 0) {
      problems.push(`line ${index + 1}: "${line}" has no comment above it saying why it may skip`);
    } else {
      const source = line
        .split("*")
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join(".*");
      entries.push({ pattern: line, why: why.join(" "), regex: new RegExp(`^${source}$`), used: 0 });
    }
  }
  return { entries, problems };
}

/** Reads the reports of `dir` and returns the lines to print and the exit code. */
export function summarise({ dir, allowListPath, ci }) {
  const lines = [];
  let passed = 0;
  let failed = 0;
  const skips = [];
  const empty = [];
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".json")) : [];
  for (const file of files) {
    const pkg = file.replace(/\.json$/, "");
    const report = JSON.parse(readFileSync(join(dir, file), "utf8"));
    passed += report.numPassedTests;
    failed += report.numFailedTests;
    if (report.numTotalTests === 0) {
      empty.push(pkg);
    }
    for (const suite of report.testResults ?? []) {
      if (suite.status === "failed" && (suite.assertionResults ?? []).length === 0) {
        failed += 1; // a test file that failed to load counts as a failure
      }
      for (const test of suite.assertionResults ?? []) {
        if (test.status !== "passed" && test.status !== "failed") {
          const name = test.fullName || [...(test.ancestorTitles ?? []), test.title].join(" ");
          const path = suite.name ? relative(root, suite.name) : "?";
          skips.push({ pkg, file: path, name, status: test.status });
        }
      }
    }
  }
  const allow = existsSync(allowListPath)
    ? parseAllowList(readFileSync(allowListPath, "utf8"))
    : { entries: [], problems: [] };
  const shownList = relative(root, allowListPath).startsWith("..")
    ? allowListPath
    : relative(root, allowListPath);
  for (const problem of allow.problems) {
    lines.push(`${shownList}: ${problem}`);
  }
  const refused = [];
  for (const skip of skips) {
    const entry = allow.entries.find((candidate) => candidate.regex.test(skip.name));
    const where = `${skip.pkg} ${skip.file} › ${skip.name}`;
    if (entry) {
      entry.used += 1;
      lines.push(`${skip.status} (allowed: ${entry.why}): ${where}`);
    } else {
      refused.push(skip);
      lines.push(`${skip.status}${ci ? " (not on the allow-list: a failure under CI)" : ""}: ${where}`);
    }
  }
  if (skips.length > 0) {
    for (const entry of allow.entries.filter((candidate) => candidate.used === 0)) {
      lines.push(`${shownList}: "${entry.pattern}" matched no skipped test`);
    }
  }
  lines.push(`packages tested: ${files.map((f) => f.replace(/\.json$/, "")).join(", ")}`);
  if (empty.length > 0) {
    lines.push(`packages with no test: ${empty.join(", ")}`);
  }
  const skipFailure = ci && (refused.length > 0 || allow.problems.length > 0);
  if (ci && refused.length > 0) {
    lines.push(
      `CI=true: ${refused.length} skipped test(s) not on ${shownList}; a skip for a missing real part is a failure in CI (see scripts/check-real-parts.mjs)`,
    );
  }
  lines.push(`Tests: ${passed} passed, ${failed} failed, ${skips.length} skipped`);
  const code = failed > 0 || files.length === 0 || empty.length > 0 || skipFailure ? 1 : 0;
  return { lines, code };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = process.env.FLEETBACK_TEST_RESULTS_DIR || join(root, ".cache", "test-results");
  if (process.argv.includes("--reset")) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    process.exit(0);
  }
  const allowListPath = process.env.FLEETBACK_SKIP_ALLOWLIST || join(root, "scripts", "skip-allowlist.txt");
  const { lines, code } = summarise({ dir, allowListPath, ci: isCi(process.env) });
  for (const line of lines) {
    console.log(line);
  }
  process.exitCode = code;
}

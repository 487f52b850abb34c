/**
 * The two gates that keep CI from going green on nothing: scripts/check-real-parts.mjs (a real
 * part missing under CI=true fails the run before any test, in one line) and
 * scripts/test-summary.mjs (under CI=true a skipped test fails the run unless
 * scripts/skip-allowlist.txt says why it may skip). Each script runs as the root test command runs
 * it, on a tools directory and reports made here. Also what a red or slow run prints (issue 32):
 * scripts/run-tests.mjs prints the summary after a failing turbo, which names every failed test and
 * every package without a report, and the summary holds the run to its time budget.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findMissingParts, probePostgres } from "../../scripts/check-real-parts.mjs";
import {
  BUDGET_FAIL_MS,
  BUDGET_WARN_MS,
  parseAllowList,
  STARTED_FILE,
  workspaceTestPackages,
} from "../../scripts/test-summary.mjs";
import { repoRoot } from "./support/paths.js";

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) {
    rmSync(dir, { recursive: true, force: true });
  }
});
function temp(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `fleetback-${label}-`));
  temps.push(dir);
  return dir;
}

function fakeExecutable(path: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, "#!/bin/sh\nexit 0\n");
  chmodSync(path, 0o755);
  return path;
}

const FETCHED = [
  "restic-0.14/usr/bin/restic",
  "restic-0.18/usr/bin/restic",
  "rest-server/usr/bin/restic-rest-server",
  "htpasswd/usr/bin/htpasswd",
];
const ON_PATH = [
  "systemd-analyze",
  "systemd-socket-activate",
  "shellcheck",
  "dash",
  "setpriv",
  "unshare",
  "curl",
  "openssl",
  "docker-compose",
  "caddy",
];

/** A tools directory like .cache/tools, holding every fetched tool but those in `without`. */
function toolsDir(without: string[] = []): string {
  const dir = temp("tools");
  for (const file of FETCHED.filter((file) => !without.includes(file))) {
    fakeExecutable(join(dir, file));
  }
  return dir;
}

function run(script: string, env: NodeJS.ProcessEnv, args: string[] = []) {
  const { CI: _ci, ...inherited } = process.env;
  return spawnSync(process.execPath, [join(repoRoot, "scripts", script), ...args], {
    env: { ...inherited, ...env },
    encoding: "utf8",
  });
}

describe("check-real-parts", () => {
  it("under CI=true fails before any test with one line naming the missing restic and its fetch", () => {
    const result = run("check-real-parts.mjs", {
      CI: "true",
      FLEETBACK_TOOLS_DIR: toolsDir(["restic-0.14/usr/bin/restic"]),
    });
    expect(result.status).toBe(1);
    const lines = result.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^check-real-parts: CI=true, .*restic 0\.14 \(.*restic-0\.14\/usr\/bin\/restic, which scripts\/fetch-tools\.sh fetches from Debian's archive\)/,
    );
    expect(lines[0]).not.toMatch(/restic 0\.18|rest-server \(|htpasswd \(/);
  });

  it("outside CI warns, one line per missing part, and lets the tests run", () => {
    const result = run("check-real-parts.mjs", {
      FLEETBACK_TOOLS_DIR: toolsDir(["restic-0.14/usr/bin/restic", "rest-server/usr/bin/restic-rest-server"]),
    });
    expect(result.status).toBe(0);
    const lines = result.stderr.trimEnd().split("\n");
    expect(lines.every((line) => line.startsWith("check-real-parts: warning: "))).toBe(true);
    expect(lines.filter((line) => line.includes("restic 0.14 missing"))).toHaveLength(1);
    expect(lines.filter((line) => line.includes("rest-server missing"))).toHaveLength(1);
  });

  it("finds nothing missing when every part is there, and names each one that is not", async () => {
    const bin = temp("bin");
    for (const name of ON_PATH) {
      fakeExecutable(join(bin, name));
    }
    const chromium = fakeExecutable(join(temp("chromium"), "chromium"));
    const everything: Parameters<typeof findMissingParts>[0] & { env: NodeJS.ProcessEnv } = {
      env: { PATH: bin, TEST_DATABASE_URL: "postgres://postgres@127.0.0.1:5432/postgres" },
      toolsDir: toolsDir(),
      uid: 0,
      chromiumPaths: [chromium],
      probe: async () => undefined,
    };
    expect(await findMissingParts(everything)).toEqual([]);

    const names = async (options: Partial<typeof everything>) =>
      (await findMissingParts({ ...everything, ...options })).map((part) => part.name);
    expect(await names({ uid: 1000 })).toEqual(["root"]);
    expect(await names({ chromiumPaths: [join(bin, "no-chromium")] })).toEqual(["Chromium"]);
    expect(await names({ env: { PATH: bin } })).toEqual(["PostgreSQL"]);
    expect(await names({ probe: async () => "127.0.0.1:5432: ECONNREFUSED" })).toEqual(["PostgreSQL"]);
    expect(await names({ toolsDir: toolsDir(["htpasswd/usr/bin/htpasswd"]) })).toEqual(["htpasswd"]);
    for (const name of ON_PATH) {
      const partial = temp("bin");
      for (const other of ON_PATH.filter((other) => other !== name)) {
        fakeExecutable(join(partial, other));
      }
      expect(await names({ env: { ...everything.env, PATH: partial } })).toEqual([name]);
    }
  });

  it("counts as PostgreSQL only what answers an SSLRequest as PostgreSQL does", async () => {
    const listen = async (answer: string): Promise<Server> => {
      const server = createServer((socket) => socket.once("data", () => socket.end(answer)));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return server;
    };
    const urlOf = (server: Server) => {
      const address = server.address();
      return `postgres://postgres@127.0.0.1:${typeof address === "object" && address ? address.port : 0}/db`;
    };
    const postgres = await listen("N");
    const other = await listen("HTTP/1.1 400 Bad Request\r\n\r\n");
    try {
      expect(await probePostgres(urlOf(postgres))).toBeUndefined();
      expect(await probePostgres(urlOf(other))).toMatch(/answered, but not as PostgreSQL/);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
    const closedUrl = urlOf(postgres);
    await new Promise((resolve) => postgres.close(resolve));
    expect(await probePostgres(closedUrl)).toMatch(/ECONNREFUSED/);
    expect(await probePostgres("not a url")).toBe("TEST_DATABASE_URL is not a URL");
  });
});

describe("test-summary", () => {
  const file = join(repoRoot, "packages/agent/src/x.test.ts");
  const report = (tests: Array<{ name: string; status: string }>) => ({
    numTotalTests: tests.length,
    numPassedTests: tests.filter((test) => test.status === "passed").length,
    numFailedTests: tests.filter((test) => test.status === "failed").length,
    numPendingTests: tests.filter((test) => test.status === "skipped").length,
    numTodoTests: tests.filter((test) => test.status === "todo").length,
    testResults: [
      {
        name: file,
        status: "passed",
        assertionResults: tests.map((test) => ({
          ancestorTitles: [],
          title: test.name,
          fullName: test.name,
          status: test.status,
        })),
      },
    ],
  });
  const resultsWith = (tests: Array<{ name: string; status: string }>) => {
    const dir = temp("results");
    writeFileSync(join(dir, "agent.json"), JSON.stringify(report(tests)));
    return dir;
  };
  // The reports made here are the only packages these tests expect, not the workspace's.
  const summary = (env: NodeJS.ProcessEnv) =>
    run("test-summary.mjs", { FLEETBACK_TEST_PACKAGES: "agent", ...env });
  const allowList = (text: string) => {
    const path = join(temp("allow"), "skip-allowlist.txt");
    writeFileSync(path, text);
    return path;
  };
  const skippedRestic = {
    name: "init through the agent (skipped: restic 0.18 not found)",
    status: "skipped",
  };
  const windowsOnly = { name: "windows paths (skipped: win32 only)", status: "skipped" };
  const todo = { name: "some day", status: "todo" };
  const passed = { name: "works", status: "passed" };
  const list = allowList("# Windows-only code paths: CI runs on Linux.\nwindows paths *\n");

  it("under CI=true fails on a skip that is not allow-listed, naming package, file and test", () => {
    const result = summary({
      CI: "true",
      FLEETBACK_TEST_RESULTS_DIR: resultsWith([passed, skippedRestic, windowsOnly, todo]),
      FLEETBACK_SKIP_ALLOWLIST: list,
    });
    expect(result.status).toBe(1);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toContain(
      `skipped (not on the allow-list: a failure under CI): agent packages/agent/src/x.test.ts › ${skippedRestic.name}`,
    );
    expect(lines).toContain(
      "todo (not on the allow-list: a failure under CI): agent packages/agent/src/x.test.ts › some day",
    );
    expect(lines).toContain(
      `skipped (allowed: Windows-only code paths: CI runs on Linux.): agent packages/agent/src/x.test.ts › ${windowsOnly.name}`,
    );
    expect(lines.at(-1)).toBe("Tests: 1 passed, 0 failed, 3 skipped");
  });

  it("under CI=true passes when every skip is allow-listed", () => {
    const result = summary({
      CI: "true",
      FLEETBACK_TEST_RESULTS_DIR: resultsWith([passed, windowsOnly]),
      FLEETBACK_SKIP_ALLOWLIST: list,
    });
    expect(result.stdout.trimEnd().split("\n").at(-1)).toBe("Tests: 1 passed, 0 failed, 1 skipped");
    expect(result.status).toBe(0);
  });

  it("outside CI lists each skip and passes", () => {
    const result = summary({
      FLEETBACK_TEST_RESULTS_DIR: resultsWith([passed, skippedRestic]),
      FLEETBACK_SKIP_ALLOWLIST: list,
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`skipped: agent packages/agent/src/x.test.ts › ${skippedRestic.name}\n`);
  });

  it("refuses under CI an allow-list entry that does not say why", () => {
    const result = summary({
      CI: "true",
      FLEETBACK_TEST_RESULTS_DIR: resultsWith([passed, windowsOnly]),
      FLEETBACK_SKIP_ALLOWLIST: allowList("windows paths *\n"),
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('"windows paths *" has no comment above it saying why it may skip');
  });

  it("keeps the repository's allow-list commented, entry by entry", () => {
    const parsed = parseAllowList(readFileSync(join(repoRoot, "scripts", "skip-allowlist.txt"), "utf8"));
    expect(parsed.problems).toEqual([]);
    for (const entry of parsed.entries) {
      expect(entry.why.length, entry.pattern).toBeGreaterThan(10);
    }
  });
});

/** A vitest JSON report of one package, its files given as test lists with optional times. */
interface FileSpec {
  file: string;
  tests: Array<{ name: string; status: string; duration?: number; failure?: string }>;
  startTime?: number;
  endTime?: number;
  status?: string;
  message?: string;
}
function packageReport(files: FileSpec[]) {
  const all = files.flatMap((file) => file.tests);
  return {
    numTotalTests: all.length,
    numPassedTests: all.filter((test) => test.status === "passed").length,
    numFailedTests: all.filter((test) => test.status === "failed").length,
    numPendingTests: all.filter((test) => test.status === "skipped").length,
    numTodoTests: 0,
    success: all.every((test) => test.status !== "failed"),
    testResults: files.map((file) => ({
      name: join(repoRoot, file.file),
      status: file.status ?? (file.tests.some((test) => test.status === "failed") ? "failed" : "passed"),
      message: file.message ?? "",
      startTime: file.startTime,
      endTime: file.endTime,
      assertionResults: file.tests.map((test) => ({
        ancestorTitles: ["encode"],
        title: test.name,
        fullName: `encode ${test.name}`,
        status: test.status,
        duration: test.duration ?? 1,
        failureMessages: test.failure ? [test.failure] : [],
      })),
    })),
  };
}
function resultsDir(reports: Record<string, FileSpec[]>, startedAgoMs?: number): string {
  const dir = temp("results");
  for (const [pkg, files] of Object.entries(reports)) {
    writeFileSync(join(dir, `${pkg}.json`), JSON.stringify(packageReport(files)));
  }
  if (startedAgoMs !== undefined) {
    writeFileSync(join(dir, STARTED_FILE), `${Date.now() - startedAgoMs}\n`);
  }
  return dir;
}
const emptyAllowList = () => {
  const path = join(temp("allow"), "skip-allowlist.txt");
  writeFileSync(path, "");
  return path;
};

describe("a red run (issue 32)", () => {
  const failing: Record<string, FileSpec[]> = {
    agent: [{ file: "packages/agent/src/a.test.ts", tests: [{ name: "works", status: "passed" }] }],
    protocol: [
      {
        file: "packages/protocol/src/codec.test.ts",
        tests: [
          { name: "round-trips", status: "passed" },
          {
            name: "refuses a bad frame",
            status: "failed",
            failure: "AssertionError: expected 1 to be 2 // Object.is equality\n    at codec.test.ts:12:5",
          },
        ],
      },
      {
        file: "packages/protocol/src/broken.test.ts",
        tests: [],
        status: "failed",
        message: "Cannot find module './gone.js'",
      },
    ],
    web: [{ file: "packages/web/src/w.test.ts", tests: [{ name: "renders", status: "passed" }] }],
  };

  it("names each failed test and file and each package without a report, after every package's results", () => {
    const result = run("test-summary.mjs", {
      FLEETBACK_TEST_RESULTS_DIR: resultsDir(failing, 60_000),
      FLEETBACK_SKIP_ALLOWLIST: emptyAllowList(),
      FLEETBACK_TEST_PACKAGES: "agent,protocol,server,web",
    });
    expect(result.status).toBe(1);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toContain("packages tested: agent, protocol, web");
    expect(lines).toContain(
      "failed: protocol packages/protocol/src/codec.test.ts › encode refuses a bad frame — AssertionError: expected 1 to be 2 // Object.is equality",
    );
    expect(lines).toContain(
      "failed: protocol packages/protocol/src/broken.test.ts (the file itself: Cannot find module './gone.js')",
    );
    expect(lines.find((line) => line.startsWith("no report from: "))).toMatch(/^no report from: server \(/);
    expect(lines.at(-1)).toBe("Tests: 3 passed, 2 failed, 0 skipped");
  });

  it("fails on a missing report even when every report present passed", () => {
    const result = run("test-summary.mjs", {
      FLEETBACK_TEST_RESULTS_DIR: resultsDir({ agent: failing.agent ?? [] }, 60_000),
      FLEETBACK_SKIP_ALLOWLIST: emptyAllowList(),
      FLEETBACK_TEST_PACKAGES: "agent,e2e",
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^no report from: e2e \(/m);
    expect(result.stdout.trimEnd().split("\n").at(-1)).toBe("Tests: 1 passed, 0 failed, 0 skipped");
  });

  it("expects a report from each workspace package with a test script", () => {
    const expected = workspaceTestPackages();
    expect(expected).toEqual(expect.arrayContaining(["crypto", "e2e", "protocol", "server"]));
    expect(expected).not.toContain("bench");
  });

  it("prints the summary after a failing command and exits with the worse code", () => {
    const env = {
      FLEETBACK_TEST_RESULTS_DIR: resultsDir(failing, 60_000),
      FLEETBACK_SKIP_ALLOWLIST: emptyAllowList(),
      FLEETBACK_TEST_PACKAGES: "agent,protocol,server,web",
    };
    const red = run("run-tests.mjs", env, [process.execPath, "-e", "process.exit(3)"]);
    expect(red.status).toBe(3);
    expect(red.stdout).toContain(
      "failed: protocol packages/protocol/src/codec.test.ts › encode refuses a bad frame",
    );
    expect(red.stdout.trimEnd().split("\n").at(-1)).toBe("Tests: 3 passed, 2 failed, 0 skipped");

    // A task that writes no report (a typecheck) failed while every report passed.
    const green = { ...env, FLEETBACK_TEST_RESULTS_DIR: resultsDir({ agent: failing.agent ?? [] }, 60_000) };
    const typecheck = run("run-tests.mjs", { ...green, FLEETBACK_TEST_PACKAGES: "agent" }, [
      process.execPath,
      "-e",
      "process.exit(2)",
    ]);
    expect(typecheck.status).toBe(2);
    expect(typecheck.stdout).toContain("Tests: 1 passed, 0 failed, 0 skipped");
    expect(typecheck.stdout.trimEnd().split("\n").at(-1)).toMatch(
      / exited 2: see the tasks on turbo's "Failed:" line/,
    );

    const passing = run("run-tests.mjs", { ...green, FLEETBACK_TEST_PACKAGES: "agent" }, [
      process.execPath,
      "-e",
      "",
    ]);
    expect(passing.status).toBe(0);
  });
});

describe("the time budget (issue 32)", () => {
  const minute = 60_000;
  const files: FileSpec[] = Array.from({ length: 12 }, (_, index) => ({
    file: `packages/server/src/f${index}.test.ts`,
    tests: [{ name: "t", status: "passed" }],
    startTime: 1_000_000,
    endTime: 1_000_000 + (index + 1) * 1_000,
  }));
  // No times on the file: its tests' durations are summed (61 s, the slowest of all).
  files.push({
    file: "packages/server/src/untimed.test.ts",
    tests: [
      { name: "a", status: "passed", duration: 60_000 },
      { name: "b", status: "passed", duration: 1_000 },
    ],
  });
  const budgetRun = (startedAgoMs: number | undefined, ci: boolean) =>
    run("test-summary.mjs", {
      ...(ci ? { CI: "true" } : {}),
      FLEETBACK_TEST_RESULTS_DIR: resultsDir({ server: files }, startedAgoMs),
      FLEETBACK_SKIP_ALLOWLIST: emptyAllowList(),
      FLEETBACK_TEST_PACKAGES: "server",
    });

  it("prints the wall time and the ten slowest test files, slowest first", () => {
    const result = budgetRun(2 * minute, true);
    expect(result.status).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toContainEqual(expect.stringMatching(/^wall time: 2m \d\ds \(budget 15 min\)$/));
    const heading = lines.findIndex((line) => line.startsWith("slowest test files"));
    const slowest = lines.slice(heading + 1, heading + 11).map((line) => line.trim());
    expect(slowest).toEqual([
      "1m 01s  server packages/server/src/untimed.test.ts",
      ...[12, 11, 10, 9, 8, 7, 6, 5, 4].map((n) => `${n}.0 s  server packages/server/src/f${n - 1}.test.ts`),
    ]);
    expect(lines[heading + 11]).not.toMatch(/^\s/);
    expect(result.stdout).not.toContain("warning:");
  });

  it("names each test that took more than half its timeout, the closest first, and passes", () => {
    const dir = resultsDir({ server: files }, 2 * minute);
    mkdirSync(join(dir, "timeouts"));
    const file = join(repoRoot, "packages/server/src/f1.test.ts");
    writeFileSync(
      join(dir, "timeouts", "server.json"),
      JSON.stringify([
        { file, name: "near its guard", durationMs: 25_000, timeoutMs: 30_000 },
        { file, name: "well inside", durationMs: 14_000, timeoutMs: 30_000 },
        { file, name: "past half", durationMs: 100_000, timeoutMs: 180_000 },
      ]),
    );
    const result = run("test-summary.mjs", {
      CI: "true",
      FLEETBACK_TEST_RESULTS_DIR: dir,
      FLEETBACK_SKIP_ALLOWLIST: emptyAllowList(),
      FLEETBACK_TEST_PACKAGES: "server",
    });
    expect(result.status).toBe(0);
    const lines = result.stdout.split("\n");
    const heading = lines.indexOf(
      "warning: 2 test(s) took more than half their timeout (a hang guard, not a budget):",
    );
    expect(heading).toBeGreaterThanOrEqual(0);
    expect(lines.slice(heading + 1, heading + 3)).toEqual([
      "  25.0 s of 30.0 s  server packages/server/src/f1.test.ts › near its guard",
      "  1m 40s of 3m 00s  server packages/server/src/f1.test.ts › past half",
    ]);
    expect(result.stdout).not.toContain("well inside");
  });

  it("warns past 15 minutes and passes, in CI too", () => {
    for (const ci of [false, true]) {
      const result = budgetRun(BUDGET_WARN_MS + minute, ci);
      expect(result.status).toBe(0);
      // The seconds are whatever starting the script took on this machine.
      expect(result.stdout).toMatch(
        /^warning: the run took 16m \d\ds, past its 15-minute budget; the slowest files are listed above$/m,
      );
    }
  });

  it("fails under CI=true past 45 minutes, and only warns outside CI", () => {
    const ci = budgetRun(BUDGET_FAIL_MS + minute, true);
    expect(ci.status).toBe(1);
    expect(ci.stdout).toMatch(
      /^CI=true: the run took 46m \d\ds, past the 45-minute limit; the slowest files are listed above$/m,
    );
    expect(ci.stdout.trimEnd().split("\n").at(-1)).toBe("Tests: 14 passed, 0 failed, 0 skipped");

    const local = budgetRun(BUDGET_FAIL_MS + minute, false);
    expect(local.status).toBe(0);
    expect(local.stdout).toMatch(
      /^warning: the run took 46m \d\ds, past its 15-minute budget and the 45-minute limit that fails CI;/m,
    );
  });

  it("says the wall time is unknown when the run did not start with --reset", () => {
    const result = budgetRun(undefined, true);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("wall time: unknown");
  });

  it("--reset clears old reports and notes when the run started", () => {
    const dir = resultsDir({ server: files });
    const before = Date.now();
    const result = run("test-summary.mjs", { FLEETBACK_TEST_RESULTS_DIR: dir }, ["--reset"]);
    expect(result.status).toBe(0);
    expect(readdirSync(dir)).toEqual([STARTED_FILE]);
    const started = Number(readFileSync(join(dir, STARTED_FILE), "utf8"));
    expect(started).toBeGreaterThanOrEqual(before);
    expect(started).toBeLessThanOrEqual(Date.now());
  });
});

/**
 * The two gates that keep CI from going green on nothing: scripts/check-real-parts.mjs (a real
 * part missing under CI=true fails the run before any test, in one line) and
 * scripts/test-summary.mjs (under CI=true a skipped test fails the run unless
 * scripts/skip-allowlist.txt says why it may skip). Each script runs as the root test command runs
 * it, on a tools directory and reports made here.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findMissingParts, probePostgres } from "../../scripts/check-real-parts.mjs";
import { parseAllowList } from "../../scripts/test-summary.mjs";
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

function run(script: string, env: NodeJS.ProcessEnv) {
  const { CI: _ci, ...inherited } = process.env;
  return spawnSync(process.execPath, [join(repoRoot, "scripts", script)], {
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
    const result = run("test-summary.mjs", {
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
    const result = run("test-summary.mjs", {
      CI: "true",
      FLEETBACK_TEST_RESULTS_DIR: resultsWith([passed, windowsOnly]),
      FLEETBACK_SKIP_ALLOWLIST: list,
    });
    expect(result.stdout.trimEnd().split("\n").at(-1)).toBe("Tests: 1 passed, 0 failed, 1 skipped");
    expect(result.status).toBe(0);
  });

  it("outside CI lists each skip and passes", () => {
    const result = run("test-summary.mjs", {
      FLEETBACK_TEST_RESULTS_DIR: resultsWith([passed, skippedRestic]),
      FLEETBACK_SKIP_ALLOWLIST: list,
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`skipped: agent packages/agent/src/x.test.ts › ${skippedRestic.name}\n`);
  });

  it("refuses under CI an allow-list entry that does not say why", () => {
    const result = run("test-summary.mjs", {
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

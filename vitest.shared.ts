/**
 * Shared vitest settings: every package also writes a JSON report under .cache/test-results so
 * the root test command can print one closing "N passed, N failed" line for the whole workspace,
 * and each test's time beside its timeout (timeouts/<package>.json) so it can name the tests
 * that took more than half of theirs.
 */
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, type ViteUserConfig } from "vitest/config";
import { TimeoutMarginReporter } from "./scripts/timeout-reporter.mjs";

const workspaceRoot = fileURLToPath(new URL(".", import.meta.url));

export function fleetbackTestConfig(
  packageDir: string,
  overrides: NonNullable<ViteUserConfig["test"]> = {},
): ViteUserConfig {
  const results = join(workspaceRoot, ".cache", "test-results");
  // A hang guard, not a budget (issue 32): the first test of a file in a cold worker took 15.5 s
  // on a loaded run, half of the 30 s this was; with the suite grown, tests took 40 s of 60, and
  // the first test of a cold server worker 126 s of 120.
  const testTimeout = overrides.testTimeout ?? 180_000;
  return defineConfig({
    test: {
      include: ["src/**/*.test.ts"],
      // One module graph per worker, not per file: re-importing the server's graph (hono, drizzle,
      // PGlite) for each of 114 files was a third of its package's time, and the files share no
      // state but the test databases, which each file closes after its last test (issue 32). A
      // package whose tests mock modules (vi.mock) sets isolate back to true.
      isolate: false,
      // Two files at a time: vitest's default here is one per core less one, a single worker on
      // this 2-core machine, while most tests wait on sockets, child processes and PGlite.
      maxWorkers: 2,
      testTimeout,
      // A beforeAll that starts PGlite and a server took over 60 s when every package's tests ran
      // side by side with another checkout's (a hang guard, like the test timeout).
      hookTimeout: 180_000,
      reporters: [
        "default",
        "json",
        new TimeoutMarginReporter(join(results, "timeouts", `${basename(packageDir)}.json`), testTimeout),
      ],
      outputFile: { json: join(results, `${basename(packageDir)}.json`) },
      ...overrides,
    },
  });
}

/**
 * Shared vitest settings: every package also writes a JSON report under .cache/test-results so
 * the root test command can print one closing "N passed, N failed" line for the whole workspace.
 */
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, type ViteUserConfig } from "vitest/config";

const workspaceRoot = fileURLToPath(new URL(".", import.meta.url));

export function fleetbackTestConfig(
  packageDir: string,
  overrides: NonNullable<ViteUserConfig["test"]> = {},
): ViteUserConfig {
  return defineConfig({
    test: {
      include: ["src/**/*.test.ts"],
      testTimeout: 30_000,
      hookTimeout: 60_000,
      reporters: ["default", "json"],
      outputFile: { json: join(workspaceRoot, ".cache", "test-results", `${basename(packageDir)}.json`) },
      ...overrides,
    },
  });
}

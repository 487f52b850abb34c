import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pgliteOptions } from "./connect.js";
import { createPgliteDataDir, isPgliteDataDir } from "./pglite-create.js";

/** What connect() passes: PGlite's defaults plus the smaller buffers. */
async function startParams(): Promise<string[]> {
  const { PGlite } = await import("@electric-sql/pglite");
  return pgliteOptions(PGlite.defaultStartParams).startParams;
}

describe("creating a PGlite data dir", () => {
  it("runs initdb in a child process, so this one's memory never holds it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "fleetback-create-"));
    try {
      const location = join(dir, "pglite");
      expect(isPgliteDataDir(location)).toBe(false);
      const params = await startParams();
      const peakBefore = process.resourceUsage().maxRSS;
      await createPgliteDataDir(location, params);
      expect(isPgliteDataDir(location)).toBe(true);
      // initdb in this process would raise its peak by ~600 MiB (WASM memory grown to ~700 MiB).
      expect(process.resourceUsage().maxRSS - peakBefore).toBeLessThan(100 * 1024);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it("fails with what the child said when the dir cannot be made", async () => {
    const dir = await mkdtemp(join(tmpdir(), "fleetback-create-"));
    try {
      const file = join(dir, "a-file");
      await writeFile(file, "not a directory");
      await expect(createPgliteDataDir(join(file, "pglite"), await startParams())).rejects.toThrow(
        /^creating it failed .*: .*(ENOTDIR|EEXIST|not a directory)/i,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);
});

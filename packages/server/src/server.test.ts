/**
 * Start-up steps that touch the data dir: the release key and the shipped agent bundle. Each
 * start is a real one (embedded PGlite in a temp data dir, port 0).
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAgentBundle } from "./agent-artifacts/agent-bundle.js";
import { createLogger } from "./log.js";
import { StartupError, startServer } from "./server.js";
import { testConfig } from "./testing/test-deps.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "fleetback-server-start-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function start(dataDir: string, lines: string[] = []) {
  const log = createLogger("info", { write: (line: string) => lines.push(line) });
  return startServer(testConfig({ dataDir, listen: { host: "127.0.0.1", port: 0 } }), { log });
}

describe("startServer: release key and agent bundles", () => {
  it("creates release.key and imports the shipped bundle once; a restart reuses both untouched", async () => {
    const dataDir = join(await mkdtemp(join(root, "case-")), "data");
    const shipped = await loadAgentBundle();
    const firstLines: string[] = [];
    const first = await start(dataDir, firstLines);
    await first.close();
    const key = await readFile(join(dataDir, "release.key"));
    expect(key.length).toBe(32);
    expect((await stat(join(dataDir, "release.key"))).mode & 0o777).toBe(0o600);
    const meta = await readFile(join(dataDir, "agent-bundles", shipped.version, "bundle.json"), "utf8");
    expect(JSON.parse(meta)).toMatchObject({ version: shipped.version, sha256: shipped.sha256 });
    expect(await readFile(join(dataDir, "agent-bundles", shipped.version, "fleetback-agent.mjs"))).toEqual(
      shipped.body,
    );
    expect(firstLines.some((line) => line.includes("release key created"))).toBe(true);
    expect(firstLines.some((line) => line.includes("agent bundle imported"))).toBe(true);
    // The build's template made the data dir (packages/db/scripts/pglite-template.mjs).
    expect(
      firstLines.some(
        (line) => line.includes('"from":"template"') && line.includes("embedded database created"),
      ),
    ).toBe(true);

    const secondLines: string[] = [];
    const second = await start(dataDir, secondLines);
    await second.close();
    expect(await readFile(join(dataDir, "release.key"))).toEqual(key);
    expect(await readFile(join(dataDir, "agent-bundles", shipped.version, "bundle.json"), "utf8")).toBe(meta);
    expect(secondLines.some((line) => line.includes("release key created"))).toBe(false);
    expect(secondLines.some((line) => line.includes("agent bundle imported"))).toBe(false);
    expect(secondLines.some((line) => line.includes("embedded database created"))).toBe(false);
  }, 120_000);

  it("refuses to start with a short release.key, naming the file, and leaves it alone", async () => {
    const dataDir = join(await mkdtemp(join(root, "case-")), "data");
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const path = join(dataDir, "release.key");
    await writeFile(path, new Uint8Array(16), { mode: 0o600 });
    const error = await start(dataDir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toContain("16 bytes; expected 32");
    expect((error as Error).message).toContain("agents refuse updates");
    expect((await readFile(path)).length).toBe(16);
  });
});

/**
 * Real processes: an installed bundle (the launcher) that runs a staged bundle in-process, commits
 * its trial once the server answered, exits 75 for the next update, and rolls back a version that
 * crashes on start. Bundles are built from this source with esbuild, as scripts/bundle.mjs does.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bundleBanner } from "../../scripts/bundle-banner.mjs";
import { saveAgentConfig } from "../config/agent-config.js";
import { createReleaseSigner, sha256Hex } from "../testing/release-signing.js";
import { startTestServer, type TestServer } from "../testing/test-server.js";
import { readBootRecord } from "./boot-record.js";
import { nodeFileOps } from "./file-ops.js";

const signer = createReleaseSigner();
const entry = fileURLToPath(new URL("../cli.ts", import.meta.url));
let work = "";
let server: TestServer;
const children: ChildProcess[] = [];

async function bundleAgent(version: string): Promise<string> {
  const outfile = join(work, `built-${version}.mjs`);
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
    banner: { js: bundleBanner(version) },
  });
  return outfile;
}

let installed = "";
let newer = "";

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "fleetback-launcher-"));
  server = await startTestServer();
  [installed, newer] = await Promise.all([bundleAgent("0.1.0"), bundleAgent("0.2.0")]);
}, 180_000);
afterEach(() => {
  for (const child of children.splice(0)) {
    child.kill("SIGKILL");
  }
});
afterAll(() => server.stop());

async function host() {
  const root = await mkdtemp(join(work, "host-"));
  const configDir = join(root, "etc");
  const stateDir = join(root, "var");
  await saveAgentConfig(configDir, {
    server_url: server.url,
    host_id: "01HOST",
    agent_token: "fa_token",
    release_public_key: signer.publicKeyBase64,
  });
  const updateDir = join(stateDir, "update");
  await mkdir(updateDir, { recursive: true, mode: 0o700 });
  const start = () => {
    const child = spawn(process.execPath, [installed, "run"], {
      env: {
        PATH: process.env.PATH,
        FLEETBACK_AGENT_CONFIG_DIR: configDir,
        FLEETBACK_AGENT_STATE_DIR: stateDir,
        FLEETBACK_RESTIC: "/nonexistent/restic",
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    children.push(child);
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    return { child, exited, stderr: () => stderr };
  };
  const record = async () => {
    const read = await readBootRecord(nodeFileOps, join(updateDir, "boot.json"));
    return read.ok ? read.record : undefined;
  };
  return { updateDir, start, record };
}

async function stage(updateDir: string, version: string, source: string) {
  const file = `agent-${version}.mjs`;
  await copyFile(source, join(updateDir, file));
  const bytes = await readFile(source);
  const sha256 = sha256Hex(bytes);
  const signature = signer.sign(bytes);
  await writeFile(
    join(updateDir, "boot.json"),
    JSON.stringify({
      format: 1,
      trial: { version, file, sha256, signature, kind: "bundle", staged_at: "2026-03-01T10:00:00Z" },
    }),
  );
}

describe("launcher in a real process", () => {
  it("runs the staged version, commits it once the server answered, and exits 75 for the next update", async () => {
    const { updateDir, start, record } = await host();
    await stage(updateDir, "0.2.0", newer);
    const agent = start();
    const peer = await server.nextPeer(20_000);
    expect((await peer.next("hello")).payload).toMatchObject({
      agent_version: "0.2.0",
      agent_kind: "bundle",
    });
    peer.send("schedule.set", { version: 1, schedules: [] });
    await peer.next("schedule.ack");
    await expect.poll(async () => (await record())?.active?.version, { timeout: 5_000 }).toBe("0.2.0");

    const next = Buffer.from("// fleetback-agent 0.3.0\n");
    server.handleHttp = (request, response) => {
      response.writeHead(request.url === "/install/agent/0.3.0" ? 200 : 404).end(next);
      return true;
    };
    peer.send("command.update", {
      version: "0.3.0",
      url: `${server.url}/install/agent/0.3.0`,
      sha256: sha256Hex(next),
      signature: signer.sign(next),
    });
    expect((await peer.next("update.result")).payload).toEqual({ version: "0.3.0", status: "restarting" });
    expect(await agent.exited).toBe(75);
    expect((await record())?.trial).toMatchObject({ version: "0.3.0", file: "agent-0.3.0.mjs" });
  }, 60_000);

  it("rolls back a version that crashes on start, and the installed one reports it once", async () => {
    const { updateDir, start, record } = await host();
    const crashing = join(work, "crashing.mjs");
    await writeFile(crashing, "// fleetback-agent 0.4.0\nthrow new Error('boom');\n");
    await stage(updateDir, "0.4.0", crashing);
    const first = start();
    expect(await first.exited).toBe(1);
    expect(first.stderr()).toContain("boom");

    start();
    const peer = await server.nextPeer(20_000);
    expect((await peer.next("hello")).payload).toMatchObject({ agent_version: "0.1.0" });
    peer.send("schedule.set", { version: 1, schedules: [] });
    expect((await peer.next("update.result")).payload).toEqual({
      version: "0.4.0",
      status: "rolled_back",
      error: "version 0.4.0 stopped before the server accepted its first connection",
    });
    await expect.poll(async () => (await record())?.failed?.reported, { timeout: 5_000 }).toBe(true);
  }, 60_000);
});

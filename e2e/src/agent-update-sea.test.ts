/**
 * Issue 7, single-executable hosts: a host without Node.js runs the agent as a Node SEA built by
 * the release code (`pnpm release`). Enrolled and run through the SEA under a supervisor standing
 * in for systemd, it says hello as `agent_kind: sea`; an update is offered as the SEA artefact of
 * the new version (never the JavaScript bundle it could not run), and the new SEA says hello.
 */
import { createHash } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildRelease, writeSeaArtefact } from "@fleetback/release";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Api, bootstrapAdmin } from "./support/api.js";
import { eventually } from "./support/eventually.js";
import { repoRoot, serverMain } from "./support/paths.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { runToEnd, type Supervised, startSupervised } from "./support/supervised.js";
import { missingNote } from "./support/tools.js";

interface HostJson {
  status: string;
  agent_version: string;
  agent_kind: string;
  os: string;
  arch: string;
  update: { version: string; state: string; error: string | null } | null;
}

const agentDir = join(repoRoot, "packages/agent");
const sha256 = (body: Buffer) => createHash("sha256").update(body).digest("hex");

const missing = missingNote({ Linux: process.platform === "linux" });
describe.skipIf(missing !== "")(`single-executable agent self-update${missing}`, () => {
  let server: ServerProcess;
  let api: Api;
  let agent: Supervised | undefined;
  const temps: string[] = [];
  const temp = async (label: string) => {
    const dir = await mkdtemp(join(tmpdir(), `fleetback-${label}-`));
    temps.push(dir);
    return dir;
  };

  beforeAll(async () => {
    server = await startServerProcess();
    api = await bootstrapAdmin(server.url, server.output());
  });
  afterAll(async () => {
    await agent?.stop();
    await server?.stop();
    for (const dir of temps) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs as a SEA, is offered the SEA of the new version and comes back with it", async () => {
    // The installed executable, as install.sh puts it in /opt for a host without node.
    const opt = await temp("sea-opt");
    const installed = await writeSeaArtefact({ agentDir, version: "9.5.0-sea", outDir: opt });
    const exe = join(opt, installed.file);
    const dirs = { configDir: join(opt, "config"), stateDir: join(opt, "state") };
    const minted = await api.send<{ token: string }>("POST", "/api/enrollment-tokens", {});
    expect(minted.status).toBe(201);
    // No node on PATH: the SEA carries its own.
    const env = { PATH: "/usr/bin:/bin", FLEETBACK_AGENT_CONFIG_DIR: dirs.configDir };
    await runToEnd(
      exe,
      ["enroll", "--server", server.url, "--token", minted.body.token, "--state-dir", dirs.stateDir],
      env,
    );
    const { host_id: hostId } = JSON.parse(readFileSync(join(dirs.configDir, "agent.json"), "utf8")) as {
      host_id: string;
    };
    const host = async () => (await api.get<{ host: HostJson }>(`/api/hosts/${hostId}`)).host;

    agent = startSupervised([exe, "run", "--config-dir", dirs.configDir, "--state-dir", dirs.stateDir], env);
    const before = await eventually(
      async () => {
        const current = await host();
        return current.status === "online" ? current : undefined;
      },
      { what: `SEA agent online\n${agent.output()}` },
    );
    expect(before).toMatchObject({ agent_version: "9.5.0-sea", agent_kind: "sea", os: "linux" });

    const release = await buildRelease({ outDir: await temp("sea-release"), version: "9.6.0-sea" });
    expect(release.manifest.artefacts.map((artefact) => artefact.kind)).toEqual(["bundle", "sea"]);
    await runToEnd(process.execPath, [serverMain, "import-release", release.dir], {
      FLEETBACK_DATA_DIR: server.dataDir,
    });
    const rollout = await api.send("POST", "/api/agent-updates", {
      version: "9.6.0-sea",
      host_ids: [hostId],
    });
    expect(rollout.status, JSON.stringify(rollout.body)).toBe(200);

    const after = await eventually(
      async () => {
        const current = await host();
        return current.agent_version === "9.6.0-sea" && current.update?.state === "succeeded"
          ? current
          : undefined;
      },
      { what: `SEA 9.6.0 online\n${agent.output()}`, timeoutMs: 90_000 },
    );
    expect(after.agent_kind).toBe("sea");
    expect(agent.output()).toMatch(/supervisor: exit 1 code=75/);
    // The installed executable (read-only under systemd) was never rewritten: the update lives in
    // the state dir and the installed one launches it.
    expect(sha256(readFileSync(exe))).toBe(installed.sha256);
    const record = JSON.parse(readFileSync(join(dirs.stateDir, "update", "boot.json"), "utf8")) as {
      active?: { version: string; kind: string; file: string };
      trial?: unknown;
    };
    expect(record.active).toMatchObject({ version: "9.6.0-sea", kind: "sea" });
    expect(record.trial).toBeUndefined();
  });
});

/**
 * The install command from the enrol page, run as a host would run it (minus sudo: tests run as
 * root), against the real server: install.sh downloads the agent bundle, checks its SHA-256,
 * enrols with the token kept out of argv, writes the systemd unit; the installed agent then
 * connects and initialises its repository with real restic. systemctl is a recording stub and
 * every path lands under a temporary root (the script's test-only FLEETBACK_INSTALL_ROOT).
 * On a host without node (a PATH of the few tools the script needs), the same command installs
 * the single-executable agent the server holds (built by the release code, imported with
 * import-release), which enrols, runs without node and says hello as `agent_kind: sea`.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildRelease } from "@fleetback/release";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentRun, startAgent } from "./support/agent-process.js";
import { type Api, bootstrapAdmin } from "./support/api.js";
import { eventually } from "./support/eventually.js";
import { repoRoot, serverMain } from "./support/paths.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { runToEnd } from "./support/supervised.js";
import { FETCHED_TOOLS, missingNote, RESTIC, toolsPresent } from "./support/tools.js";

const hasCurl = spawnSync("curl", ["--version"]).status === 0;
const isRoot = process.getuid?.() === 0;

const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent(), curl: hasCurl, root: isRoot });
describe.skipIf(missing !== "")(`install.sh from the server${missing}`, () => {
  let server: ServerProcess;
  let api: Api;
  let agent: AgentRun | undefined;

  beforeAll(async () => {
    server = await startServerProcess();
    api = await bootstrapAdmin(server.url, server.output());
  });
  const temps: string[] = [];
  afterAll(async () => {
    await agent?.stop();
    await server?.stop();
    for (const dir of temps) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("installs, enrols and runs an agent that initialises its repository", async () => {
    const repoDir = join(mkdtempSync(join(tmpdir(), "fleetback-repo-")), "repo");
    const minted = await api.send<{ token: string; install_command: string }>(
      "POST",
      "/api/enrollment-tokens",
      {
        repository: { url: repoDir, password: "install-e2e-repository-password" },
      },
    );
    expect(minted.status).toBe(201);
    const root = mkdtempSync(join(tmpdir(), "fleetback-root-"));
    mkdirSync(join(root, "run", "systemd", "system"), { recursive: true });
    const bin = join(root, "stub-bin");
    mkdirSync(bin);
    const calls = join(root, "systemctl.calls");
    writeFileSync(join(bin, "systemctl"), `#!/usr/bin/env bash\necho "$*" >> ${JSON.stringify(calls)}\n`, {
      mode: 0o755,
    });
    const command = minted.body.install_command.replace("| sudo bash", "| bash");
    const result = spawnSync("bash", ["-c", command], {
      encoding: "utf8",
      env: {
        PATH: [
          bin,
          dirname(RESTIC["0.18"]),
          dirname(process.execPath),
          "/usr/sbin",
          "/usr/bin",
          "/sbin",
          "/bin",
        ].join(":"),
        HOME: root,
        FLEETBACK_INSTALL_ROOT: root,
      },
      timeout: 120_000,
    });
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout + result.stderr).not.toContain(minted.body.token);

    const configFile = join(root, "etc", "fleetback-agent", "agent.json");
    const config = JSON.parse(readFileSync(configFile, "utf8")) as { host_id: string; server_url: string };
    expect(config.server_url).toBe(server.url);
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, "root", "fleetback-restore")).mode & 0o777).toBe(0o700);
    const unit = readFileSync(join(root, "etc", "systemd", "system", "fleetback-agent.service"), "utf8");
    expect(unit).toContain("NoNewPrivileges=yes");
    expect(unit).toContain("ProtectSystem=strict");
    expect(readFileSync(calls, "utf8")).toMatch(/daemon-reload\n[\s\S]*enable --now fleetback-agent/);

    // What systemd would start: the installed bundle with the installed config.
    const installed = join(root, "opt", "fleetback-agent", "current.mjs");
    expect(execFileSync(process.execPath, [installed, "version"], { encoding: "utf8" }).trim()).toMatch(
      /^\d+\.\d+\.\d+/,
    );
    agent = startAgent(
      ["run"],
      {
        configDir: join(root, "etc", "fleetback-agent"),
        stateDir: join(root, "var", "lib", "fleetback-agent"),
      },
      { FLEETBACK_RESTIC: RESTIC["0.18"] },
      installed,
    );
    await eventually(
      async () => {
        const { host } = await api.get<{ host: { status: string; repository_init: { state: string } } }>(
          `/api/hosts/${config.host_id}`,
        );
        return host.status === "online" && host.repository_init.state === "initialised";
      },
      { what: "the installed agent online with its repository initialised", timeoutMs: 90_000 },
    );
    expect(statSync(join(repoDir, "config")).isFile()).toBe(true);
  });

  it("installs the single-executable agent on a host without node, which enrols and runs", async () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, "packages/agent/package.json"), "utf8")) as {
      version: string;
    };
    const releaseDir = mkdtempSync(join(tmpdir(), "fleetback-sea-release-"));
    temps.push(releaseDir);
    const release = await buildRelease({ outDir: releaseDir, version });
    await runToEnd(process.execPath, [serverMain, "import-release", release.dir], {
      FLEETBACK_DATA_DIR: server.dataDir,
    });
    const minted = await api.send<{ token: string; install_command: string }>(
      "POST",
      "/api/enrollment-tokens",
      {},
    );
    expect(minted.status).toBe(201);

    const root = mkdtempSync(join(tmpdir(), "fleetback-root-sea-"));
    temps.push(root);
    mkdirSync(join(root, "run", "systemd", "system"), { recursive: true });
    // No node anywhere on this PATH: only what install.sh runs, and a systemctl stub.
    const bin = join(root, "host-bin");
    mkdirSync(bin);
    for (const tool of [
      "bash",
      "cat",
      "chmod",
      "chown",
      "curl",
      "date",
      "id",
      "install",
      "ln",
      "mkdir",
      "mktemp",
      "mv",
      "rm",
      "sha256sum",
      "uname",
    ]) {
      const real = spawnSync("bash", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
      symlinkSync(real, join(bin, tool));
    }
    writeFileSync(join(bin, "systemctl"), "#!/bin/bash\nexit 0\n", { mode: 0o755 });
    const path = [bin, dirname(RESTIC["0.18"])].join(":");
    expect(spawnSync("bash", ["-c", "command -v node"], { env: { PATH: path } }).status).not.toBe(0);

    const command = minted.body.install_command.replace("| sudo bash", "| bash");
    const result = spawnSync("/bin/bash", ["-c", command], {
      encoding: "utf8",
      env: { PATH: path, HOME: root, FLEETBACK_INSTALL_ROOT: root },
      timeout: 180_000,
    });
    const said = `${result.stdout}\n${result.stderr}`;
    expect(result.status, `${said} ${JSON.stringify(result.error)}`).toBe(0);
    expect(said).not.toContain(minted.body.token);
    const unit = readFileSync(join(root, "etc", "systemd", "system", "fleetback-agent.service"), "utf8");
    const execStart = /^ExecStart=(\S+)/m.exec(unit)?.[1];
    expect(execStart).toBe("/opt/fleetback-agent/current");

    const installed = join(root, "opt", "fleetback-agent", "current");
    const config = JSON.parse(readFileSync(join(root, "etc", "fleetback-agent", "agent.json"), "utf8")) as {
      host_id: string;
    };
    const child = spawn(
      installed,
      [
        "run",
        "--config-dir",
        join(root, "etc", "fleetback-agent"),
        "--state-dir",
        join(root, "var", "lib", "fleetback-agent"),
      ],
      { env: { PATH: path, HOME: root, FLEETBACK_RESTIC: RESTIC["0.18"] }, stdio: "ignore" },
    );
    try {
      const host = await eventually(
        async () => {
          const { host } = await api.get<{
            host: { status: string; agent_kind: string; agent_version: string };
          }>(`/api/hosts/${config.host_id}`);
          return host.status === "online" ? host : undefined;
        },
        { what: "the installed single executable online" },
      );
      expect(host).toMatchObject({ agent_kind: "sea", agent_version: version });
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
  });
});

import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { renderInstallScript } from "./install-script.js";
import { DEFAULT_AGENT_PATHS, parseUnitDirectives, renderAgentUnit } from "./systemd-unit.js";
import {
  TEST_BASE_URL as BASE,
  createSandbox,
  expectRefusal,
  FIRST_INSTALL_SYSTEMCTL,
  fileMode as mode,
  runOutput as output,
  type RunResult,
  type Sandbox,
  sandboxPerTest,
  TEST_TOKEN as TOKEN,
  tokenEnrolment,
  AGENT_UNIT as UNIT,
} from "./testing/install-sandbox.js";

const SEA_UNIT_EXEC =
  "/opt/fleetback-agent/current run --config-dir /etc/fleetback-agent --state-dir /var/lib/fleetback-agent";

const sandbox = sandboxPerTest();
const execStart = (sb: Sandbox) =>
  parseUnitDirectives(readFileSync(join(sb.root, UNIT), "utf8")).find((d) => d.key === "ExecStart")?.value;

describe("a host without node, where the server has single-executable agents", () => {
  let sb: Sandbox;
  let result: RunResult;
  const at = (path: string) => join(sb.root, path);

  beforeAll(async () => {
    sb = await createSandbox();
    await sb.removeStub("node");
    result = sb.run(await sb.installScript("1.0.0", { seaArches: ["x64", "arm64"] }), ["--token", TOKEN]);
    return () => sb.dispose();
  });

  it("succeeds, saying why it installs the single-executable agent", () => {
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(
      "no usable Node.js (Node.js >= 20 is required but node is not on root's PATH (sudo uses its secure_path)); installing the single-executable agent for linux-x64",
    );
    expect(output(result)).not.toContain(TOKEN);
  });

  it("downloads the SEA for the host's architecture and no bundle", async () => {
    expect(await sb.calls("uname")).toEqual(["-m"]);
    expect(await sb.calls("curl")).toEqual([
      expect.stringMatching(
        /^-fsSL --retry 3 -o \/\S+ https:\/\/backup\.example\.test:8443\/install\/agent\/1\.0\.0\/linux-x64$/,
      ),
    ]);
  });

  it("installs it executable under its version with a current link", () => {
    expect(readdirSync(at("opt/fleetback-agent")).sort()).toEqual(["agent-1.0.0", "current"]);
    expect(mode(at("opt/fleetback-agent/agent-1.0.0"))).toBe(0o755);
    expect(readlinkSync(at("opt/fleetback-agent/current"))).toBe("agent-1.0.0");
  });

  it("enrols through the SEA itself", async () => {
    expect(await sb.agentCalls()).toEqual([tokenEnrolment(sb, "sea")]);
  });

  it("writes a unit that runs the SEA with no node and no bundle", async () => {
    expect(readFileSync(at(UNIT), "utf8")).toBe(
      renderAgentUnit({
        ...DEFAULT_AGENT_PATHS,
        execPath: "/opt/fleetback-agent/current",
        bundle: "",
        serverUrl: BASE,
      }),
    );
    expect(execStart(sb)).toBe(SEA_UNIT_EXEC);
    expect(await sb.calls("systemctl")).toEqual(FIRST_INSTALL_SYSTEMCTL);
  });
});

describe("choosing the single-executable agent", () => {
  it("downloads the arm64 SEA on an aarch64 host", async () => {
    const sb = await sandbox();
    await sb.removeStub("node");
    await sb.stub("uname", "echo aarch64");
    const result = sb.run(await sb.installScript("1.0.0", { seaArches: ["x64", "arm64"] }), ["--announce"]);
    expect(result.status).toBe(0);
    expect((await sb.calls("curl"))[0]).toMatch(/\/install\/agent\/1\.0\.0\/linux-arm64$/);
    expect((await sb.agentCalls()).map((c) => [c.kind, c.command])).toEqual([["sea", "announce"]]);
  });

  it("falls back to the SEA when node on PATH is too old", async () => {
    const sb = await sandbox();
    await sb.stub("node", "echo v18.19.1");
    const result = sb.run(await sb.installScript("1.0.0", { seaArches: ["x64"] }), ["--token", TOKEN]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("no usable Node.js (Node.js >= 20 is required, ");
    expect(execStart(sb)).toBe(SEA_UNIT_EXEC);
  });

  it("installs the SEA with --sea even where node is fine", async () => {
    const sb = await sandbox();
    const result = sb.run(await sb.installScript("1.0.0", { seaArches: ["x64"] }), [
      "--token",
      TOKEN,
      "--sea",
    ]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("installing the single-executable agent for linux-x64 (--sea)");
    expect(execStart(sb)).toBe(SEA_UNIT_EXEC);
    expect((await sb.agentCalls()).map((c) => c.kind)).toEqual(["sea"]);
  });

  it("keeps the bundle where node is fine and --sea is not given", async () => {
    const sb = await sandbox();
    expect(sb.run(await sb.installScript("1.0.0", { seaArches: ["x64"] }), ["--token", TOKEN]).status).toBe(
      0,
    );
    expect(execStart(sb)).toMatch(/ \/opt\/fleetback-agent\/current\.mjs run /);
    expect(await sb.calls("uname")).toEqual([]);
  });

  it("re-runs without a second download, and switches a bundle host to the SEA once node is gone", async () => {
    const sb = await sandbox();
    const script = await sb.installScript("1.0.0", { seaArches: ["x64"] });
    expect(sb.run(script, ["--token", TOKEN]).status).toBe(0);
    await sb.removeStub("node");
    const switched = sb.run(script, []);
    expect(switched.status).toBe(0);
    expect(execStart(sb)).toBe(SEA_UNIT_EXEC);
    const again = sb.run(script, []);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain("agent 1.0.0 is already installed");
    expect((await sb.calls("curl")).map((call) => call.split("/install/agent/")[1])).toEqual([
      "1.0.0",
      "1.0.0/linux-x64",
    ]);
    expect(readdirSync(join(sb.root, "opt/fleetback-agent")).sort()).toEqual([
      "agent-1.0.0",
      "agent-1.0.0.mjs",
      "current",
      "current.mjs",
    ]);
    expect(await sb.agentCalls()).toHaveLength(1);
  });
});

describe("refusals", () => {
  it("keeps today's Node.js error where the server has no SEA for this host", async () => {
    const sb = await sandbox();
    await sb.removeStub("node");
    const result = sb.run(await sb.installScript("1.0.0", { seaArches: ["arm64"] }), ["--token", TOKEN]);
    expectRefusal(
      sb,
      result,
      "Node.js >= 20 is required but node is not on root's PATH",
      "--node /path/to/node",
    );
  });

  it("refuses a SEA whose SHA-256 differs from the embedded one", async () => {
    const sb = await sandbox();
    await sb.removeStub("node");
    await sb.serveSea("1.0.0", "x64", "#!/bin/sh\necho tampered\n");
    const script = renderInstallScript({
      baseUrl: BASE,
      agentVersion: "1.0.0",
      bundleSha256: "1".repeat(64),
      seaArtefacts: [{ os: "linux", arch: "x64", sha256: "0".repeat(64) }],
    });
    const result = sb.run(script, ["--token", TOKEN]);
    expectRefusal(sb, result, "the downloaded single-executable agent has SHA-256", "expected 0000");
    expect(await sb.agentCalls()).toEqual([]);
  });

  it.each([
    {
      what: "refuses --sea when the server has no SEA for this host",
      host: (sb: Sandbox) => sb.stub("uname", "echo riscv64"),
      args: () => ["--token", TOKEN, "--sea"],
      says: "no single-executable agent 1.0.0 for linux-riscv64",
    },
    {
      what: "refuses --sea together with --node",
      host: async () => {},
      args: (sb: Sandbox) => ["--sea", "--node", sb.nodePath, "--announce"],
      says: "use either --node or --sea, not both",
    },
    {
      what: "never falls back from an explicit --node",
      host: (sb: Sandbox) => sb.stub("old-node", "echo v18.0.0"),
      args: (sb: Sandbox) => ["--node", join(sb.bin, "old-node"), "--announce"],
      says: "Node.js >= 20 is required",
    },
  ])("$what", async ({ host, args, says }) => {
    const sb = await sandbox();
    await host(sb);
    expectRefusal(sb, sb.run(await sb.installScript("1.0.0", { seaArches: ["x64"] }), args(sb)), says);
  });
});

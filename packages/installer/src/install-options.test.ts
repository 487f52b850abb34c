import { existsSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderInstallScript } from "./install-script.js";
import {
  TEST_BASE_URL as BASE,
  expectRefusal,
  expectUntouched,
  findOnPath,
  runOutput as output,
  type Sandbox,
  sandboxPerTest,
  TEST_TOKEN as TOKEN,
} from "./testing/install-sandbox.js";

const sandbox = sandboxPerTest();

describe("options", () => {
  it("announces without a token and passes a normalised --tls-pin to the agent", async () => {
    const sb = await sandbox();
    const pin = `${"AB:".repeat(31)}AB`;
    const result = sb.run(await sb.installScript(), ["--announce", "--tls-pin", pin]);
    expect(result.status).toBe(0);
    const [call] = await sb.agentCalls();
    expect(call?.command).toBe("announce");
    expect(call?.token).toBeNull();
    expect(call?.argv.slice(-2)).toEqual(["--tls-pin", "ab".repeat(32)]);
    expect((await sb.calls("curl"))[0]).toContain("--insecure");
  });

  it("downloads with wget when curl is missing", async () => {
    const sb = await sandbox();
    await sb.removeStub("curl");
    await sb.stub("wget", sb.downloaderStub);
    expect(sb.run(await sb.installScript(), ["--token", TOKEN]).status).toBe(0);
    expect(await sb.calls("wget")).toEqual([
      expect.stringMatching(/^-q -O \/\S+ https:\/\/\S+\/install\/agent\/1\.0\.0$/),
    ]);
    expect(readlinkSync(join(sb.root, "opt/fleetback-agent/current.mjs"))).toBe("agent-1.0.0.mjs");
  });

  it("--no-start enables the service without starting it", async () => {
    const sb = await sandbox();
    expect(sb.run(await sb.installScript(), ["--token", TOKEN, "--no-start"]).status).toBe(0);
    expect(await sb.calls("systemctl")).toEqual([
      "daemon-reload",
      "enable --now fleetback-agent-restore.socket",
      "enable fleetback-agent",
    ]);
  });

  it("--repo-path lets the agent write a local repository through a drop-in, and a re-run without it removes it", async () => {
    const sb = await sandbox();
    const dropIn = join(sb.root, "etc/systemd/system/fleetback-agent.service.d/repo-paths.conf");
    const first = sb.run(await sb.installScript(), [
      "--token",
      TOKEN,
      "--repo-path",
      "/srv/restic/",
      "--repo-path=/mnt/usb/repo",
    ]);
    expect(first.status).toBe(0);
    expect(readFileSync(dropIn, "utf8")).toBe(
      "# Local repository paths the agent may write (install.sh --repo-path).\n[Service]\nReadWritePaths=/srv/restic /mnt/usb/repo\n",
    );
    expect(statSync(join(sb.root, "srv/restic")).isDirectory()).toBe(true);
    const again = sb.run(await sb.installScript(), []);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain("removed /etc/systemd/system/fleetback-agent.service.d/repo-paths.conf");
    expect(existsSync(dropIn)).toBe(false);
  });

  it.each(["relative/path", "/", "/srv/a b", "/srv/%i", "/srv/../etc"])(
    "--repo-path refuses %j",
    async (path) => {
      const sb = await sandbox();
      const result = sb.run(await sb.installScript(), ["--token", TOKEN, "--repo-path", path]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain("--repo-path must be an absolute path");
    },
  );

  it("--help prints usage naming the server and changes nothing", async () => {
    const sb = await sandbox();
    const result = sb.run(await sb.installScript(), ["--help"]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`curl -fsSL ${BASE}/install/install.sh | sudo bash -s -- [options]`);
    expectUntouched(sb);
  });

  it.each([
    [[], "pass --token TOKEN or --announce"],
    [["--token", TOKEN, "--announce"], "either --token or --announce"],
    [["--token"], "--token needs a value"],
    [["--tls-pin", "abc", "--announce"], "64 hex digits"],
    [[`--tokn=${TOKEN}`], "unknown option --tokn"],
    [[TOKEN], "unexpected argument (not shown"],
  ])("refuses %j without echoing a token", async (args, message) => {
    const sb = await sandbox();
    const result = sb.run(await sb.installScript(), args);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(message);
    expect(output(result)).not.toContain(TOKEN);
  });
});

describe("refusals before anything changes", () => {
  it("refuses a bundle whose SHA-256 differs from the embedded one", async () => {
    const sb = await sandbox();
    await sb.serveBundle("1.0.0", "console.log('tampered');\n");
    const script = renderInstallScript({
      baseUrl: BASE,
      agentVersion: "1.0.0",
      bundleSha256: "0".repeat(64),
    });
    expectRefusal(sb, sb.run(script, ["--token", TOKEN]), "expected 0000");
    expect(await sb.calls("systemctl")).toEqual([]);
    expect(await sb.agentCalls()).toEqual([]);
  });

  it.each([
    {
      what: "refuses Node.js older than 20, naming the version needed and how to get it",
      host: (sb: Sandbox) => sb.stub("node", "echo v18.19.1"),
      says: ["Node.js >= 20 is required", "v18.19.1", "https://nodejs.org"],
    },
    {
      what: "refuses when node is missing, suggesting --node",
      host: (sb: Sandbox) => sb.removeStub("node"),
      says: ["--node /path/to/node"],
    },
    {
      what: "refuses to run as another user than root",
      host: (sb: Sandbox) => sb.stub("id", "echo 1000"),
      says: ["must run as root"],
    },
  ])("$what", async ({ host, says }) => {
    const sb = await sandbox();
    await host(sb);
    expectRefusal(sb, sb.run(await sb.installScript(), ["--token", TOKEN]), ...says);
  });

  const sh = findOnPath("dash") ?? findOnPath("sh");
  it.skipIf(!sh)(
    `stops with a message when piped to sh instead of bash${sh ? "" : " (skipped: no dash or sh on PATH)"}`,
    async () => {
      const sb = await sandbox();
      const result = sb.run(await sb.installScript(), ["--token", TOKEN], { shell: sh });
      expect(result.status).toBe(1);
      expect(result.stderr).toBe(
        `install.sh needs bash, not sh: curl -fsSL ${BASE}/install/install.sh | sudo bash -s -- --token TOKEN\n`,
      );
      expectUntouched(sb);
    },
  );
});

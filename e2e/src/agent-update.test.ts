/**
 * Issue 7 end to end, with real processes: the built server, the agent bundle installed as the
 * launcher (as install.sh puts it in /opt), run under a supervisor process that restarts it
 * whenever it exits (systemd's Restart=always), and a man-in-the-middle proxy between the two.
 * - An operator rolls out a bundle built in the test: the agent verifies it, swaps, exits, is
 *   restarted and says hello with the new version; the fleet shows the update succeeded.
 * - The proxy corrupts the download (bad hash), then also forges the message's hash (bad
 *   signature): both are refused and the running agent is never restarted.
 * - A bundle that crashes on start is rolled back: the previous version runs again and reports it.
 * - A bundle that starts but never connects is rolled back by the launcher's watchdog once its
 *   trial is over; the agent runs with a short FLEETBACK_UPDATE_TRIAL for that one test only, so
 *   the real updates around it keep the default trial whatever the machine's load.
 * - In headless Chromium, an admin rolls a version out from the fleet page's form (a form with
 *   no host ticked is refused with a toast) and the fleet table shows the host on it.
 */
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildRelease } from "@fleetback/release";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeAgentDirs, runAgent } from "./support/agent-process.js";
import { ADMIN, type Api, bootstrapAdmin } from "./support/api.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { eventually } from "./support/eventually.js";
import { agentBundle, repoRoot, serverMain } from "./support/paths.js";
import { freePort } from "./support/ports.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { runToEnd, type Supervised, startSupervised } from "./support/supervised.js";
import { startTamperProxy, type TamperProxy } from "./support/tamper-proxy.js";
import { missingNote } from "./support/tools.js";

interface HostJson {
  id: string;
  status: string;
  agent_version: string;
  agent_kind: string;
  update: { version: string; state: string; error: string | null } | null;
}

const SHIPPED = JSON.parse(readFileSync(join(repoRoot, "packages/agent/package.json"), "utf8")) as {
  version: string;
};

function sha256(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}

/** A release dir with one bundle, as `pnpm release` writes it, imported by the server's CLI. */
async function publishBundle(server: ServerProcess, version: string, body: Buffer): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), "fleetback-release-"));
  const file = `fleetback-agent-${version}.mjs`;
  writeFileSync(join(dir, file), body);
  writeFileSync(
    join(dir, "manifest.json"),
    JSON.stringify({ version, artefacts: [{ kind: "bundle", file, sha256: sha256(body) }] }),
  );
  await runToEnd(process.execPath, [serverMain, "import-release", dir], {
    FLEETBACK_DATA_DIR: server.dataDir,
  });
  return body;
}

/** The real agent bundle with another version baked in, released as `pnpm release` does it. */
async function releaseBundle(server: ServerProcess, version: string): Promise<Buffer> {
  const release = await buildRelease({
    outDir: await mkdtemp(join(tmpdir(), "fleetback-release-")),
    version,
    sea: false,
  });
  await runToEnd(process.execPath, [serverMain, "import-release", release.dir], {
    FLEETBACK_DATA_DIR: server.dataDir,
  });
  return readFileSync(join(release.dir, release.manifest.artefacts[0]?.file ?? ""));
}

describe("agent self-update under a supervisor", () => {
  let server: ServerProcess;
  let proxy: TamperProxy;
  let api: Api;
  let hostId: string;
  let agent: Supervised;
  let agentCommand: string[];
  const host = async () => (await api.get<{ host: HostJson }>(`/api/hosts/${hostId}`)).host;
  const openUpdateAlerts = async () =>
    (
      await api.get<{ alerts: Array<{ kind: string; message: string }> }>(
        `/api/alerts?state=open&host_id=${hostId}`,
      )
    ).alerts.filter((alert) => alert.kind === "agent_update_failed");
  const rollOut = async (version: string) => {
    const answer = await api.send<{ targets: Array<{ host_id: string; state: string }> }>(
      "POST",
      "/api/agent-updates",
      { version, host_ids: [hostId] },
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.targets.map((target) => target.host_id)).toEqual([hostId]);
  };

  beforeAll(async () => {
    // Agents reach the server only through the proxy, and so do the URLs the server hands out.
    const proxyPort = await freePort();
    server = await startServerProcess({ FLEETBACK_BASE_URL: `http://127.0.0.1:${proxyPort}` });
    proxy = await startTamperProxy(server.listenUrl, proxyPort);
    api = await bootstrapAdmin(proxy.url, server.output());

    const minted = await api.send<{ token: string }>("POST", "/api/enrollment-tokens", {});
    expect(minted.status).toBe(201);
    const dirs = await makeAgentDirs();
    const enrolled = await runAgent(["enroll", "--server", proxy.url, "--token", minted.body.token], dirs);
    expect(enrolled.code, enrolled.output).toBe(0);
    hostId = (JSON.parse(readFileSync(join(dirs.configDir, "agent.json"), "utf8")) as { host_id: string })
      .host_id;

    // Installed like install.sh does: a read-only launcher bundle outside the state dir.
    const opt = await mkdtemp(join(tmpdir(), "fleetback-opt-"));
    mkdirSync(opt, { recursive: true });
    copyFileSync(agentBundle, join(opt, "current.mjs"));
    agentCommand = [
      process.execPath,
      join(opt, "current.mjs"),
      "run",
      "--config-dir",
      dirs.configDir,
      "--state-dir",
      dirs.stateDir,
    ];
    agent = startSupervised(agentCommand);
    await eventually(async () => (await host()).status === "online", { what: "agent online" });
  });

  /** `systemctl restart` after the unit's environment changed. */
  const restartAgent = async (env: Record<string, string>) => {
    await agent.stop();
    await eventually(async () => (await host()).status === "offline" || undefined, {
      what: "agent offline after its stop",
    });
    agent = startSupervised(agentCommand, env);
    await eventually(async () => (await host()).status === "online" || undefined, {
      what: "agent online again",
    }).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${agent.output()}`);
    });
  };

  afterAll(async () => {
    await agent?.stop();
    await proxy?.close();
    await server?.stop();
  });

  it("updates to a new bundle, restarts and says hello with the new version", async () => {
    expect((await host()).agent_version).toBe(SHIPPED.version);
    await releaseBundle(server, "9.1.0-e2e");
    await rollOut("9.1.0-e2e");
    const updated = await eventually(
      async () => {
        const current = await host();
        return current.agent_version === "9.1.0-e2e" && current.update?.state === "succeeded"
          ? current
          : undefined;
      },
      { what: `agent 9.1.0-e2e online\n${agent.output()}`, timeoutMs: 60_000 },
    );
    expect(updated.status).toBe("online");
    expect(agent.starts(), agent.output()).toBe(2);
    expect(agent.output()).toMatch(/supervisor: exit 1 code=75/);
    expect(proxy.downloads.map((download) => download.path)).toEqual(["/install/agent/9.1.0-e2e"]);
  });

  it("refuses a corrupted download and a forged hash, and keeps running", async () => {
    const body = await releaseBundle(server, "9.2.0-e2e");
    const before = agent.starts();

    proxy.mode = "bad-hash";
    await rollOut("9.2.0-e2e");
    const badHash = await eventually(
      async () => {
        const current = await host();
        return current.update?.state === "refused" ? current : undefined;
      },
      { what: `update refused (bad hash)\n${agent.output()}` },
    );
    expect(badHash.update?.error).toMatch(/SHA-256/i);

    proxy.mode = "bad-signature";
    proxy.prepareBadSignature(body);
    await rollOut("9.2.0-e2e");
    const badSignature = await eventually(
      async () => {
        const current = await host();
        return current.update?.state === "refused" && /signature/i.test(current.update?.error ?? "")
          ? current
          : undefined;
      },
      { what: `update refused (bad signature)\n${agent.output()}` },
    );
    expect(badSignature.agent_version).toBe("9.1.0-e2e");
    expect(badSignature.status).toBe("online");
    expect(agent.starts(), agent.output()).toBe(before);
    expect(proxy.downloads.filter((download) => download.path === "/install/agent/9.2.0-e2e")).toHaveLength(
      2,
    );
    proxy.mode = "off";
  });

  it("rolls back a bundle that crashes on start", async () => {
    const before = agent.starts();
    const crashing = Buffer.from(
      '// fleetback-agent 9.3.0-crash\nthrow new Error("this release is broken on purpose");\n',
    );
    await publishBundle(server, "9.3.0-crash", crashing);
    await rollOut("9.3.0-crash");
    const rolledBack = await eventually(
      async () => {
        const current = await host();
        return current.update?.state === "rolled_back" && current.status === "online" ? current : undefined;
      },
      { what: `update rolled back\n${agent.output()}`, timeoutMs: 90_000 },
    );
    expect(rolledBack.agent_version).toBe("9.1.0-e2e");
    expect(rolledBack.update?.error).toMatch(/9\.3\.0-crash/);
    expect(agent.starts()).toBeGreaterThanOrEqual(before + 2);
    expect(agent.output()).toMatch(/this release is broken on purpose/);
    const [alert] = await eventually(async () => {
      const open = await openUpdateAlerts();
      return open.length === 1 && /rolled back/.test(open[0]?.message ?? "") ? open : undefined;
    });
    expect(alert?.message).toMatch(/9\.3\.0-crash/);
  });

  it("rolls back a bundle that starts but never connects, once its trial is over", async () => {
    // The trial is the launcher's setting, read when it starts the new version: the installed
    // agent is restarted with it, as after an edit of the unit's Environment=.
    await restartAgent({ FLEETBACK_UPDATE_TRIAL: "2s" });
    // Runs forever and never opens a connection: only the launcher's watchdog can end it.
    const hanging = Buffer.from("// fleetback-agent 9.3.5-hang\nsetInterval(() => {}, 1000);\n");
    await publishBundle(server, "9.3.5-hang", hanging);
    await rollOut("9.3.5-hang");
    const rolledBack = await eventually(
      async () => {
        const current = await host();
        return current.update?.state === "rolled_back" && current.status === "online" ? current : undefined;
      },
      { what: "hanging update rolled back", timeoutMs: 90_000 },
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${agent.output()}`);
    });
    expect(rolledBack.agent_version).toBe("9.1.0-e2e");
    // The watchdog's reason, not the one a start gives for a trial that exited or crashed: the
    // trial ran until its deadline.
    expect(rolledBack.update?.error).toBe("version 9.3.5-hang did not connect to the server within 2 s");
    const output = agent.output();
    expect(output).toMatch(/"msg":"starting the updated agent".*"version":"9\.3\.5-hang".*"trial":true/);
    expect(output).toMatch(/rolled back: version 9\.3\.5-hang did not connect to the server within 2 s/);
    // The launcher ended the trial with 75 and the supervisor started the previous version.
    expect(output).toMatch(/supervisor: exit 2 code=75[\s\S]*supervisor: start 3/);
    await restartAgent({});
  });

  const noBrowser = missingNote({ Chromium: chromiumPath !== undefined });
  it.skipIf(noBrowser !== "")(
    `rolls out from the host list and shows the new version there${noBrowser}`,
    async () => {
      await releaseBundle(server, "9.4.0-e2e");
      const browser = await launchBrowser();
      try {
        const page = await browser.newPage({ viewport: { width: 360, height: 800 } });
        await page.goto(`${proxy.url}/login`);
        await page.getByLabel("Username").fill(ADMIN.username);
        await page.getByLabel("Password").fill(ADMIN.password);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.waitForURL(`${proxy.url}/`);
        await page.goto(`${proxy.url}/hosts`);

        const form = page.getByTestId("rollout-form");
        await form.getByTestId("rollout-version").selectOption("9.4.0-e2e");
        await form.getByTestId("rollout-submit").click();
        // Refused at its field (issue 35.7): the hosts' boxes say what is missing.
        await form.getByTestId("field-error-host_ids").waitFor();
        expect(await form.getByTestId("field-error-host_ids").textContent()).toMatch(/host/i);

        await form.getByTestId("rollout-version").selectOption("9.4.0-e2e");
        await form.getByTestId("rollout-host").first().check();
        await form.getByTestId("rollout-submit").press("Enter");
        await eventually(
          async () => {
            await page.goto(`${proxy.url}/hosts`);
            const agentCell = await page.getByTestId("host-agent").first().textContent();
            const state = await page.getByTestId("host-update").first().getAttribute("data-update-state");
            return agentCell?.includes("9.4.0-e2e") && state === "succeeded";
          },
          {
            what: `host list shows 9.4.0-e2e succeeded\n${agent.output()}`,
            timeoutMs: 60_000,
            intervalMs: 1_000,
          },
        );
        expect((await host()).agent_version).toBe("9.4.0-e2e");
        // Its hello with the requested version resolved the earlier update alert.
        expect(await openUpdateAlerts()).toEqual([]);
        const shots = join(repoRoot, ".cache", "screenshots");
        mkdirSync(shots, { recursive: true });
        await page.screenshot({ path: join(shots, "fleet-rollout-360.png"), fullPage: true });
      } finally {
        await browser.close();
      }
    },
  );
});

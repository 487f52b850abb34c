/**
 * The operator's first hour, in headless Chromium against the built server and a real agent:
 * bootstrap the first admin from the printed link, sign out and in, mint an enrolment token and
 * see its install command, approve a host that announced itself (the fingerprint the agent
 * prints equals the one on the enrol page), and watch it come online on the host list.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentRun, makeAgentDirs, startAgent } from "./support/agent-process.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { eventually } from "./support/eventually.js";
import { repoRoot } from "./support/paths.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { FETCHED_TOOLS, missingNote, RESTIC, toolsPresent } from "./support/tools.js";

const PASSWORD = "browser operator passphrase";
const shots = join(repoRoot, ".cache", "screenshots");

const missing = missingNote({ Chromium: chromiumPath !== undefined, [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`operator pages in a real browser${missing}`, () => {
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;
  const agents: AgentRun[] = [];

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    server = await startServerProcess();
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.stop()));
    await browser?.close();
    await server?.stop();
  });

  it("bootstraps, signs in, mints a token, approves an announced host and sees it online", async () => {
    const link = /(http\S+\/bootstrap\?token=\S+)/.exec(server.output())?.[1] ?? "";
    await page.goto(link);
    await page.getByTestId("username").fill("admin");
    await page.getByTestId("password").fill(PASSWORD);
    await page.getByTestId("submit").click();
    await page.waitForURL(`${server.url}/`);
    expect(await page.getByTestId("count-total").textContent()).toBe("0 hosts in all");
    await page.goto(`${server.url}/hosts`);
    await page.getByTestId("fleet-empty").waitFor();

    await page.getByTestId("logout").click();
    await page.waitForURL(/\/login/);
    await page.getByTestId("username").fill("admin");
    await page.getByTestId("password").fill("a wrong password");
    await page.getByTestId("submit").click();
    await page.getByTestId("toast").first().waitFor();
    expect(await page.getByTestId("toast").first().textContent()).toBe("Username or password is wrong.");
    await page.getByTestId("password").fill(PASSWORD);
    await page.getByTestId("submit").click();
    await page.waitForURL(`${server.url}/`);

    await page.goto(`${server.url}/enroll`);
    await page.locator('input[name="repository_url"]').fill("rest:http://127.0.0.1:8000/web-01/");
    await page.locator('input[name="repository_username"]').fill("web-01");
    await page.getByTestId("mint").click();
    const command = (await page.getByTestId("install-command").textContent()) ?? "";
    const token = (await page.getByTestId("token").textContent()) ?? "";
    expect(token).toMatch(/^fbe_/);
    expect(command).toBe(
      `curl -fsSL '${server.url}/install/install.sh' | sudo bash -s -- --token '${token}'`,
    );
    expect(await page.getByTestId("htpasswd-snippet").textContent()).toContain("htpasswd -i -B");
    await page.screenshot({ path: join(shots, "enroll-minted.png"), fullPage: true });

    const dirs = await makeAgentDirs();
    const env = { FLEETBACK_RESTIC: RESTIC["0.18"] };
    const announce = startAgent(["announce", "--server", server.url], dirs, env);
    agents.push(announce);
    const agentFingerprint = await eventually(
      async () => /(SHA256:[A-Za-z0-9+/]{43})/.exec(announce.output())?.[1],
      { what: "the agent to print its fingerprint" },
    );
    await page.goto(`${server.url}/enroll`);
    const row = page.getByTestId("pending-row").first();
    expect(await row.getByTestId("pending-fingerprint").textContent()).toBe(agentFingerprint);
    await page.screenshot({ path: join(shots, "enroll-pending.png"), fullPage: true });
    await row.getByTestId("approve").click();
    // The approve step: the fingerprint again, and the host's first group (none here).
    expect(await page.getByTestId("approve-fingerprint").textContent()).toBe(agentFingerprint);
    await page.getByTestId("approve-confirm").click();
    await page.waitForURL(`${server.url}/enroll`);
    expect(await announce.exited).toBe(0);

    const run = startAgent(["run"], dirs, env);
    agents.push(run);
    await page.goto(`${server.url}/hosts`);
    await eventually(
      async () => {
        await page.reload();
        const status = await page.getByTestId("host-status").first().textContent({ timeout: 2_000 });
        return status === "online" ? status : undefined;
      },
      { what: "the host online on the host list", intervalMs: 1_000 },
    );
    await page.screenshot({ path: join(shots, "fleet-online.png"), fullPage: true });
    await page.setViewportSize({ width: 360, height: 800 });
    await page.screenshot({ path: join(shots, "fleet-online-360.png"), fullPage: true });
  });
});

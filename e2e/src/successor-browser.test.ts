/**
 * Issue 38.2's successor flow in headless Chromium at 1280 and 390 px, against the built server,
 * real agents, restic 0.18 and rest-server: on a host whose machine is gone, an admin makes a
 * successor token from the host page (the install command shown once, fitting the screen); a new
 * agent enrols with the token copied from the page and becomes that host; "Recover everything"
 * in place, confirmed with the host's name, leads to the host's jobs, and the group's file is back
 * byte-identical.
 */
import { chmodSync, lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentRun, makeAgentDirs, runAgent, startAgent } from "./support/agent-process.js";
import { ADMIN, type Api, bootstrapAdmin } from "./support/api.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { overflowCulprits } from "./support/page-fit.js";
import { type RestServer, startRestServer } from "./support/rest-server.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { FETCHED_TOOLS, missingNote, toolsPresent } from "./support/tools.js";

const WAIT = { timeoutMs: 90_000, intervalMs: 250 };

interface JobJson {
  id: string;
  kind: string;
  status: string;
  error: string | null;
}

const missing = missingNote({ Chromium: chromiumPath !== undefined, [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`a successor machine in the browser${missing}`, () => {
  let rest: RestServer;
  let server: ServerProcess;
  let api: Api;
  let browser: Browser;
  const agents: AgentRun[] = [];

  beforeAll(async () => {
    rest = await startRestServer();
    server = await startServerProcess();
    api = await bootstrapAdmin(server.url, server.output());
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.stop()));
    await browser?.close();
    await server?.stop();
    await rest?.stop();
  });

  async function signedIn(width: number): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    await page.goto(`${server.url}/login`);
    await page.getByLabel("Username").fill(ADMIN.username);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${server.url}/`);
    return page;
  }

  async function fits(page: Page, width: number): Promise<void> {
    const scroll = await page.locator("html").evaluate((root) => root.scrollWidth);
    expect(scroll, (await overflowCulprits(page)).join(", ")).toBeLessThanOrEqual(width);
  }

  for (const width of [1280, 390] as const) {
    it(`at ${width} px: a successor token from the host page, and every group recovered in place`, async () => {
      const old = await enrolHost({ api, rest, restic: "0.18", user: `succ-${width}` });
      const oldAgent = startAgent(["run"], old.dirs, old.env);
      agents.push(oldAgent);
      await waitHostReady(api, old.hostId);
      const name = `files-${width}`;
      expect((await api.send("PATCH", `/api/hosts/${old.hostId}`, { name })).status).toBe(200);
      const source = mkdtempSync(join(tmpdir(), "fleetback-succ-browser-"));
      const file = join(source, "ledger.db");
      writeFileSync(file, Buffer.from(Array.from({ length: 50_000 }, (_, i) => (i * 7) % 241)));
      chmodSync(file, 0o640);
      const group = await api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${old.hostId}/source-groups`,
        { name: "ledger", includes: [source] },
      );
      expect(group.status, JSON.stringify(group.body)).toBe(201);
      const run = await api.send<{ job_id: string }>(
        "POST",
        `/api/hosts/${old.hostId}/source-groups/${group.body.source_group.id}/run`,
      );
      expect(run.status, JSON.stringify(run.body)).toBe(201);
      await eventually(
        async () => {
          const { job } = await api.get<{ job: JobJson }>(`/api/jobs/${run.body.job_id}`);
          return job.status === "succeeded" ? job : undefined;
        },
        { what: "the old machine's backup", ...WAIT },
      );
      await eventually(
        async () =>
          (await api.get<{ snapshots: unknown[] }>(`/api/hosts/${old.hostId}/snapshots`)).snapshots.length >
          0,
        { what: "its snapshot in the list", ...WAIT },
      );
      const original = readFileSync(file);
      // The machine is gone, and its files with it.
      await oldAgent.stop();
      rmSync(dirname(old.dirs.configDir), { recursive: true, force: true });
      rmSync(file);

      const page = await signedIn(width);
      await page.goto(`${server.url}/hosts/${old.hostId}`);
      await page.getByTestId("successor-token").click();
      await page.getByTestId("successor-minted").waitFor();
      const command = (await page.getByTestId("install-command").textContent()) ?? "";
      await fits(page, width);
      const token = /--token '(fbe_[^']+)'/.exec(command)?.[1] ?? "";
      expect(token).toMatch(/^fbe_/);

      const dirs = await makeAgentDirs();
      const enrolled = await runAgent(["enroll", "--server", server.url, "--token", token], dirs, old.env);
      expect(enrolled.code, enrolled.output).toBe(0);
      agents.push(startAgent(["run"], dirs, old.env));
      await waitHostReady(api, old.hostId);

      await page.goto(`${server.url}/hosts/${old.hostId}`);
      await page.getByTestId("recover-in-place").check();
      await page.getByTestId("recover-confirm").fill(name);
      await fits(page, width);
      await page.getByTestId("recover-submit").click();
      await page.waitForURL(`${server.url}/hosts/${old.hostId}/jobs`);
      const restore = await eventually(
        async () => {
          const { jobs } = await api.get<{ jobs: JobJson[] }>(`/api/jobs?host_id=${old.hostId}&kind=restore`);
          const [job] = jobs;
          return job && ["succeeded", "failed", "lost", "cancelled"].includes(job.status) ? job : undefined;
        },
        { what: "the recovery's restore job", ...WAIT },
      );
      expect(restore.status, restore.error ?? "").toBe("succeeded");
      expect(readFileSync(file).equals(original)).toBe(true);
      expect(lstatSync(file).mode & 0o7777).toBe(0o640);
      await page.close();
    });
  }
});

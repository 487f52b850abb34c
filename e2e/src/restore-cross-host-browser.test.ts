/**
 * Issue 38's wizard in headless Chromium at 1280 and 390 px, against the built server, two real
 * agents, restic 0.18 and rest-server: an operator opens host A's snapshot, types a path, chooses
 * "Restore onto" host B, reviews (the review names B, and in place would need B's name), restores
 * to a new directory, and the job page names both hosts and reaches succeeded. The file is on disk
 * byte-identical; the page fits the screen at both widths.
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentRun, startAgent } from "./support/agent-process.js";
import { ADMIN, type Api, bootstrapAdmin } from "./support/api.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { overflowCulprits } from "./support/page-fit.js";
import { type RestServer, startRestServer } from "./support/rest-server.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { FETCHED_TOOLS, missingNote, toolsPresent } from "./support/tools.js";

const WAIT = { timeoutMs: 90_000, intervalMs: 250 };
const WAIT_OPTS = { timeout: WAIT.timeoutMs };

interface JobJson {
  id: string;
  status: string;
  error: string | null;
}

const missing = missingNote({ Chromium: chromiumPath !== undefined, [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`restore onto another host in the browser${missing}`, () => {
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

  async function waitJob(jobId: string): Promise<JobJson> {
    return eventually(
      async () => {
        const { job } = await api.get<{ job: JobJson }>(`/api/jobs/${jobId}`);
        return ["succeeded", "failed", "cancelled", "lost"].includes(job.status) ? job : undefined;
      },
      { what: `job ${jobId} to finish`, ...WAIT },
    );
  }

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${server.url}/login`);
    await page.getByLabel("Username").fill(ADMIN.username);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${server.url}/`);
  }

  for (const width of [1280, 390] as const) {
    it(`at ${width} px: A's snapshot restored onto B from the wizard`, async () => {
      const a = await enrolHost({ api, rest, restic: "0.18", user: `wa-${width}` });
      const b = await enrolHost({ api, rest, restic: "0.18", user: `wb-${width}` });
      agents.push(startAgent(["run"], a.dirs, a.env), startAgent(["run"], b.dirs, b.env));
      await waitHostReady(api, a.hostId);
      await waitHostReady(api, b.hostId);
      // Two agents on one machine enrol under the same hostname: the names tell them apart here.
      for (const [id, name] of [
        [a.hostId, `web-a-${width}`],
        [b.hostId, `web-b-${width}`],
      ] as const) {
        const renamed = await api.send("PATCH", `/api/hosts/${id}`, { name });
        expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
      }
      const nameOf = async (id: string) =>
        (await api.get<{ host: { name: string } }>(`/api/hosts/${id}`)).host.name;
      const [aName, bName] = [await nameOf(a.hostId), await nameOf(b.hostId)];

      const source = mkdtempSync(join(tmpdir(), "fleetback-cross-browser-src-"));
      mkdirSync(join(source, "conf"));
      const file = join(source, "conf", "site.conf");
      writeFileSync(file, `server_name ${aName};\n`.repeat(500));
      chmodSync(file, 0o600);
      const group = await api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${a.hostId}/source-groups`,
        { name: "conf", includes: [source] },
      );
      const run = await api.send<{ job_id: string }>(
        "POST",
        `/api/hosts/${a.hostId}/source-groups/${group.body.source_group.id}/run`,
      );
      expect((await waitJob(run.body.job_id)).status).toBe("succeeded");
      const snapshotId = await eventually(
        async () =>
          (await api.get<{ snapshots: Array<{ id: string }> }>(`/api/hosts/${a.hostId}/snapshots`))
            .snapshots[0]?.id,
        { what: "A's snapshot in the cache", ...WAIT },
      );

      const page = await browser.newPage({ viewport: { width, height: 900 } });
      try {
        await signIn(page);
        await page.goto(`${server.url}/hosts/${a.hostId}/snapshots/${snapshotId}/restore`);
        const form = page.getByTestId("restore-form");
        await form.getByTestId("restore-path-input").fill(file);
        await form.getByLabel("Restore onto").selectOption({ label: bName });
        const target = mkdtempSync(join(tmpdir(), "fleetback-cross-browser-to-"));
        await form.getByLabel("To a new directory").check();
        await form.getByLabel("Target directory").fill(target);
        await form.getByRole("button", { name: "Review" }).click();
        const review = page.getByTestId("restore-review");
        await review.waitFor(WAIT_OPTS);
        const onto = (await page.getByTestId("review-onto").textContent()) ?? "";
        expect(onto).toContain(`a restore of ${aName}'s snapshot onto ${bName}`);
        expect((await page.getByTestId("review-target").textContent()) ?? "").toContain(`on ${bName}`);
        expect(await overflowCulprits(page)).toEqual([]);
        await review.getByRole("button", { name: "Restore now" }).click();
        await page.waitForURL(/\/jobs\/[0-9A-HJKMNP-TV-Z]{26}$/);
        const jobId = page.url().split("/").pop() ?? "";
        const from = (await page.getByTestId("job-restore-from").textContent()) ?? "";
        expect(from).toContain(`a snapshot of ${aName} onto ${bName}`);
        expect(await overflowCulprits(page)).toEqual([]);
        const job = await waitJob(jobId);
        const { job: row } = await api.get<{ job: { host_id: string } }>(`/api/jobs/${jobId}`);
        expect(row.host_id).toBe(b.hostId);
        expect(job.status, job.error ?? "").toBe("succeeded");
        const copy = join(target, file);
        expect(readFileSync(copy).equals(readFileSync(file))).toBe(true);
        expect(lstatSync(copy).mode & 0o7777).toBe(0o600);
      } finally {
        await page.close();
      }
    });
  }
});

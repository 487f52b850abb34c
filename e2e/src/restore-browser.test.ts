/**
 * Issue 6's restore wizard in headless Chromium against the built server, a real agent, restic
 * 0.18 and rest-server: a small tree is backed up through the API, then an operator signs in,
 * opens the host's snapshots, follows "Restore…", expands the lazily loaded tree down to `docs`,
 * ticks it, first tries an in-place restore with a wrong host name (the wizard comes back with
 * the error and the ticked path, and no job exists), then restores to a new directory, reviews,
 * submits and watches the job page reach succeeded. The files are checked on disk.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Frame, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentRun, startAgent } from "./support/agent-process.js";
import { ADMIN, type Api, bootstrapAdmin } from "./support/api.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { type RestServer, startRestServer } from "./support/rest-server.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { toolsPresent } from "./support/tools.js";

const WAIT = { timeoutMs: 90_000, intervalMs: 250 };
const WAIT_OPTS = { timeout: WAIT.timeoutMs };
const FILES = [
  { path: "docs/plain.txt", body: "plain text\n" },
  { path: "docs/with space ünïcødé.txt", body: "spaces and unicode\n" },
  { path: "other/keep.txt", body: "not restored\n" },
];

interface JobJson {
  id: string;
  status: string;
  error: string | null;
}

function buildTree(): string {
  const root = mkdtempSync(join(tmpdir(), "fleetback-restore-browser-src-"));
  for (const file of FILES) {
    const path = join(root, file.path);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, file.body);
  }
  return root;
}

async function text(locator: Locator): Promise<string> {
  return ((await locator.textContent({ timeout: 5_000 })) ?? "").trim();
}

/** Opens the folder `path` in the wizard's tree (it must be listed) and waits for its children. */
async function expandFolder(page: Page, path: string): Promise<void> {
  const name = path.split("/").pop() ?? "";
  const entry = page.getByTestId("restore-tree").locator(`li[data-type="dir"][data-path="${path}"]`);
  await entry.waitFor({ timeout: WAIT.timeoutMs });
  await entry.locator("summary").getByText(`${name}/`, { exact: true }).click();
  await entry.locator(`.tree-listing[data-path="${path}"]`).waitFor({ timeout: WAIT.timeoutMs });
}

describe.skipIf(!chromiumPath || !toolsPresent())("restore wizard in the browser", () => {
  let rest: RestServer;
  let server: ServerProcess;
  let api: Api;
  let browser: Browser;
  let page: Page;
  const agents: AgentRun[] = [];

  beforeAll(async () => {
    rest = await startRestServer();
    server = await startServerProcess();
    api = await bootstrapAdmin(server.url, server.output());
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
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

  it("restic 0.18: browse, tick a folder, refuse a wrong host name, restore to a new directory", async () => {
    const { hostId, dirs, env } = await enrolHost({ api, rest, restic: "0.18", user: "rb-018" });
    agents.push(startAgent(["run"], dirs, env));
    await waitHostReady(api, hostId);
    const hostName = (await api.get<{ host: { name: string } }>(`/api/hosts/${hostId}`)).host.name;

    const source = buildTree();
    const created = await api.send<{ source_group: { id: string } }>(
      "POST",
      `/api/hosts/${hostId}/source-groups`,
      { name: "tree", includes: [source] },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const run = await api.send<{ job_id: string }>(
      "POST",
      `/api/hosts/${hostId}/source-groups/${created.body.source_group.id}/run`,
    );
    expect(run.status, JSON.stringify(run.body)).toBe(201);
    const backup = await waitJob(run.body.job_id);
    expect(backup.status, backup.error ?? "").toBe("succeeded");
    const snapshotId = await eventually(
      async () =>
        (await api.get<{ snapshots: Array<{ id: string }> }>(`/api/hosts/${hostId}/snapshots`)).snapshots[0]
          ?.id,
      { what: "the snapshot in the cache", ...WAIT },
    );
    const target = mkdtempSync(join(tmpdir(), "fleetback-restore-browser-to-"));
    const docs = join(source, "docs");
    const restoreJobs = async () =>
      (await api.get<{ jobs: JobJson[] }>(`/api/jobs?host_id=${hostId}&kind=restore`)).jobs;

    // Sign in and find the snapshot on the host's snapshots tab.
    await page.goto(`${server.url}/login`);
    await page.getByLabel("Username").fill(ADMIN.username);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${server.url}/`);
    await page.goto(`${server.url}/hosts/${hostId}`);
    await page.getByRole("tab", { name: "Snapshots" }).click();
    await page.waitForURL(`${server.url}/hosts/${hostId}/snapshots`);
    await page.getByRole("link", { name: "Restore…" }).first().click();
    await page.waitForURL(new RegExp(`/hosts/${hostId}/snapshots/${snapshotId}/restore`));
    expect(await page.getByTestId("restore-snapshot").getAttribute("data-snapshot-id")).toBe(snapshotId);

    // The tree loads lazily from the root; folders open in place (no page load) down to docs.
    let loads = 0;
    const countLoads = (frame: Frame) => {
      if (frame === page.mainFrame()) {
        loads += 1;
      }
    };
    page.on("framenavigated", countLoads);
    await page.getByTestId("restore-tree").locator('.tree-listing[data-path="/"]').waitFor(WAIT_OPTS);
    const segments = source.split("/").filter((part) => part !== "");
    let current = "";
    for (const segment of segments) {
      current = `${current}/${segment}`;
      await expandFolder(page, current);
    }
    const sourceListing = page.locator(`.tree-listing[data-path="${source}"]`);
    const names = await sourceListing
      .locator(":scope > ul > li[data-testid=tree-entry]")
      .evaluateAll((items) => items.map((item) => item.getAttribute("data-path")));
    expect(names.sort()).toEqual([docs, join(source, "other")].sort());
    await expandFolder(page, docs);
    const docsListing = page.locator(`.tree-listing[data-path="${docs}"]`);
    expect(await docsListing.getByText("with space ünïcødé.txt", { exact: true }).isVisible()).toBe(true);
    expect(await docsListing.getByText("plain.txt", { exact: true }).isVisible()).toBe(true);
    const docsBox = page.getByLabel(`Restore ${docs}`, { exact: true });
    await docsBox.check();
    expect(await docsBox.isChecked()).toBe(true);
    // Ticking a folder does not fold it away.
    expect(await page.locator(`li[data-path="${docs}"] > details`).getAttribute("open")).not.toBeNull();
    page.off("framenavigated", countLoads);
    expect(loads).toBe(0);

    // In place with a wrong host name: refused, input kept, nothing started.
    const form = page.getByTestId("restore-form");
    expect(await form.getByLabel("To a new directory").isChecked()).toBe(true);
    await form.getByLabel(`In place: overwrite the files on ${hostName}`).check();
    await form.getByLabel("To restore in place, type the host name").fill(`${hostName}-wrong`);
    await form.getByRole("button", { name: "Review" }).click();
    const errors = page.getByTestId("restore-errors");
    await errors.waitFor(WAIT_OPTS);
    const fields = await page
      .getByTestId("restore-error")
      .evaluateAll((items) => items.map((item) => item.getAttribute("data-field")));
    expect(fields).toContain("confirm_hostname");
    expect(await text(errors)).toContain("confirm_hostname");
    expect(await page.getByTestId("error-confirm_hostname").isVisible()).toBe(true);
    const kept = page.getByTestId("restore-selected").getByRole("checkbox", { name: docs });
    expect(await kept.isChecked()).toBe(true);
    expect(await page.getByTestId("restore-selected").getByRole("checkbox").count()).toBe(1);
    expect(await form.getByLabel(`In place: overwrite the files on ${hostName}`).isChecked()).toBe(true);
    expect(await restoreJobs()).toEqual([]);

    // To a new directory under our target: review, then restore.
    await form.getByLabel("To a new directory").check();
    await form.getByLabel("Target directory").fill(target);
    await form.getByRole("button", { name: "Review" }).click();
    const review = page.getByTestId("restore-review");
    await review.waitFor(WAIT_OPTS);
    expect(await page.getByTestId("review-paths").locator("li").allTextContents()).toEqual([docs]);
    const reviewTarget = await text(page.getByTestId("review-target"));
    expect(reviewTarget).toContain("New directory");
    expect(reviewTarget).toContain(target);
    expect(await restoreJobs()).toEqual([]);
    await review.getByRole("button", { name: "Restore now" }).click();
    await page.waitForURL(/\/jobs\/[0-9A-HJKMNP-TV-Z]{26}$/);
    const jobId = page.url().split("/").pop() ?? "";
    expect(await text(page.getByTestId("job-kind"))).toBe("restore");
    // The job page changes in place: no reloads while the status moves on.
    loads = 0;
    page.on("framenavigated", countLoads);
    await eventually(
      async () => {
        const status = await text(page.getByTestId("job-status"));
        if (["failed", "cancelled", "lost"].includes(status)) {
          throw new Error(`restore job ${jobId} ended ${status}`);
        }
        return status === "succeeded" ? true : undefined;
      },
      { what: `job ${jobId} to show succeeded`, ...WAIT },
    );
    page.off("framenavigated", countLoads);
    expect(loads).toBe(0);
    expect((await restoreJobs()).map((job) => job.id)).toEqual([jobId]);

    // On disk: docs came back under <target>/<original absolute path>; other did not.
    for (const file of FILES) {
      const path = join(target, source, file.path);
      if (file.path.startsWith("other/")) {
        expect(existsSync(path), path).toBe(false);
        continue;
      }
      expect(readFileSync(path, "utf8"), file.path).toBe(file.body);
    }
    expect(existsSync(join(target, source, "other"))).toBe(false);
  });
});

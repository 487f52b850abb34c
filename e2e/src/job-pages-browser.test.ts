/**
 * Issue 35 point 3 in headless Chromium at 1280 and 390 px, against the built server, real agents
 * on restic 0.18 and 0.14 and rest-server: a job page watched live until the job ends shows what
 * the same page shows reloaded (a backup, a compare), a cancelled backup says who cancelled it and
 * how far it got with no full bar, and on restic 0.14 what the tool does not report reads as
 * unknown, never 0, live, reloaded and in the snapshot list. Every page fits its width: no
 * sideways scroll, and the named controls on the screen.
 *
 * Each host reaches its repository through a relay that can hold requests: a job is held until
 * both pages follow it live, so "live" is never a page that loaded after the end. One server, two
 * hosts and one signed-in browser serve every case.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgent } from "./support/agent-process.js";
import { ADMIN } from "./support/api.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { type HoldProxy, startHoldProxy } from "./support/hold-proxy.js";
import { offScreen, overflowCulprits, wideTables } from "./support/page-fit.js";
import { createGroup } from "./support/slow-backup.js";
import { FINISHED_JOB_STATUSES, useStack, waitJob } from "./support/stack.js";
import { FETCHED_TOOLS, missingNote, type ResticVersion, toolsPresent } from "./support/tools.js";

const WIDTHS = [1280, 390] as const;
const WAIT = { timeoutMs: 120_000, intervalMs: 100 };
type Hold = (method: string, path: string) => boolean;
const HOLD_ALL: Hold = () => true;
const HOLD_UPLOAD: Hold = (method, path) => method === "POST" && path.includes("/data/");

interface Host {
  hostId: string;
  relay: HoldProxy;
  groupId: string;
  source: string;
}

/** What the job page shows, read in one go (a message landing between reads would mix states). */
interface Shown {
  status: string;
  percent: string;
  files: string;
  bytes: string;
  rate: string;
  eta: string;
  /** Who stopped it and how far it got, without the moment (relative, so it ages). */
  stopped: string;
  summary: string;
  diffCounts: string;
  log: string;
  diffRows: string[];
  bar: { value: string | null; hidden: boolean } | null;
  /** The page still follows the job. */
  streaming: boolean;
  /** The mark set while watching survives: the page was updated in place, not reloaded. */
  marked: boolean;
}

const READ = `(() => {
  const el = (id) => document.querySelector('[data-testid="' + id + '"]');
  const words = (node) => (node?.textContent ?? "").replace(/\\s+/g, " ").trim();
  const t = (id) => words(el(id));
  const stopped = el("job-stopped");
  const bar = el("job-progress");
  return {
    status: t("job-status"),
    percent: t("job-percent"),
    files: t("job-files"),
    bytes: t("job-bytes"),
    rate: t("job-rate"),
    eta: t("job-eta"),
    stopped: stopped
      ? Array.from(stopped.childNodes).map((n) => (n.nodeName === "TIME" ? "<time>" : n.textContent)).join("").replace(/\\s+/g, " ").trim()
      : "",
    summary: (el("job-summary")?.innerText ?? "").replace(/\\s+/g, " ").trim(),
    diffCounts: t("diff-counts"),
    log: t("job-log"),
    diffRows: Array.from(document.querySelectorAll('[data-testid="diff-row"]')).map(
      (row) => row.getAttribute("data-change") + ": " + words(row),
    ),
    bar: bar ? { value: bar.getAttribute("value"), hidden: bar.hidden } : null,
    streaming: document.getElementById("job")?.hasAttribute("data-stream") ?? false,
    marked: window.__watchedLive === true,
  };
})()`;

const read = (page: Page) => page.evaluate(READ) as Promise<Shown>;

/** What a reader compares between the live and the reloaded page. */
function figures(shown: Shown): Omit<Shown, "streaming" | "marked"> {
  const { streaming: _streaming, marked: _marked, ...rest } = shown;
  return rest;
}

/** Sideways overflow, tables wider than their box, and `controls` not fully on the screen. */
async function fitProblems(page: Page, controls: string[]): Promise<string[]> {
  const problems: string[] = [];
  const widths = (await page.evaluate(
    "({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })",
  )) as { scroll: number; inner: number };
  if (widths.scroll > widths.inner) {
    problems.push(
      `scrollWidth ${widths.scroll} > ${widths.inner}: ${(await overflowCulprits(page)).join(", ")}`,
    );
  }
  problems.push(...(await wideTables(page)));
  for (const selector of controls) {
    for (const problem of await offScreen(page, selector)) {
      problems.push(`${selector} ${problem}`);
    }
  }
  return problems;
}

/** An unknown figure written as zero: "0 B", "0 files", "0 of …". */
const ZERO_FIGURE = /(^|[^\d.,])0 B\b|(^|[^\d.,])0 files\b|^0 of /;

const missing = missingNote({ Chromium: chromiumPath !== undefined, [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`job pages, live and reloaded, at 1280 and 390 px${missing}`, () => {
  const stack = useStack();
  let browser: Browser;
  let context: BrowserContext;
  const hosts = {} as Record<ResticVersion, Host>;

  beforeAll(async () => {
    browser = await launchBrowser();
    context = await browser.newContext();
    const login = await context.newPage();
    await login.goto(`${stack.server.url}/login`);
    await login.getByLabel("Username").fill(ADMIN.username);
    await login.getByLabel("Password").fill(ADMIN.password);
    await login.getByRole("button", { name: "Sign in" }).click();
    await login.waitForURL(`${stack.server.url}/`);
    await login.close();
    await Promise.all(
      (["0.18", "0.14"] as const).map(async (restic) => {
        const relay = await startHoldProxy(stack.rest.url);
        const host = await enrolHost({
          api: stack.api,
          rest: { ...stack.rest, url: relay.url },
          restic,
          user: `pages-${restic.replace(".", "")}`,
        });
        stack.agents.push(startAgent(["run"], host.dirs, host.env));
        await waitHostReady(stack.api, host.hostId);
        const source = mkdtempSync(join(tmpdir(), "fleetback-jobpages-"));
        for (let i = 0; i < 3; i++) {
          writeFileSync(join(source, `part-${i}.bin`), randomBytes(2 ** 20));
        }
        const groupId = await createGroup(stack.api, host.hostId, "pages", [source]);
        hosts[restic] = { hostId: host.hostId, relay, groupId, source };
      }),
    );
  });
  afterAll(async () => {
    await browser?.close();
    for (const host of Object.values(hosts)) {
      await host.relay.close();
      rmSync(host.source, { recursive: true, force: true });
    }
  });

  async function runGroup(host: Host): Promise<string> {
    const run = await stack.api.send<{ job_id: string }>(
      "POST",
      `/api/hosts/${host.hostId}/source-groups/${host.groupId}/run`,
    );
    expect(run.status, JSON.stringify(run.body)).toBe(201);
    return run.body.job_id;
  }

  /**
   * Holds the host's repository requests that `hold` matches, starts the job, and opens its page
   * at both widths; returns once both follow it live, with the relay still holding.
   */
  /**
   * What the agent logged after the job's result (a backup's repository statistics): never on the
   * live page, which ended with the result, and on the reloaded one under its own heading.
   */
  async function epilogueOf(jobId: string): Promise<string> {
    const page = await context.newPage();
    try {
      return await eventually(
        async () => {
          await page.goto(`${stack.server.url}/jobs/${jobId}`);
          const after = page.getByTestId("job-log-after");
          return (await after.count()) > 0 ? ((await after.textContent()) ?? "") : undefined;
        },
        { what: `the epilogue of job ${jobId}`, ...WAIT, intervalMs: 500 },
      );
    } finally {
      await page.close();
    }
  }

  async function watchLive(host: Host, hold: Hold, start: () => Promise<string>) {
    host.relay.hold(hold);
    const jobId = await start();
    const pages = await Promise.all(
      WIDTHS.map(async (width) => {
        const page = await context.newPage();
        await page.setViewportSize({ width, height: 900 });
        await page.goto(`${stack.server.url}/jobs/${jobId}`);
        return page;
      }),
    );
    await eventually(
      async () =>
        (await Promise.all(pages.map((page) => page.getByTestId("job-live").isVisible()))).every(Boolean),
      { what: `both pages to follow job ${jobId} live`, ...WAIT },
    );
    for (const page of pages) {
      await page.evaluate("window.__watchedLive = true");
      // The running job's page: its cancel question on the screen at this width.
      expect(await fitProblems(page, ['[data-testid="job-cancel-ask"]', '[data-testid="job-host"]'])).toEqual(
        [],
      );
    }
    return { jobId, pages };
  }

  /** The page once the ended job's page has replaced the live one. */
  function ended(page: Page): Promise<Shown> {
    return eventually(
      async () => {
        const shown = await read(page);
        return FINISHED_JOB_STATUSES.includes(shown.status) && !shown.streaming ? shown : undefined;
      },
      { what: "the live page to show the ended job", ...WAIT },
    );
  }

  /** Live (updated in place) and reloaded agree, and both fit; returns what they show. */
  async function liveMatchesReloaded(pages: Page[], controls: string[]): Promise<Shown> {
    const shown: Shown[] = [];
    for (const page of pages) {
      const live = await ended(page);
      expect(live.marked, "the live page was reloaded instead of updated in place").toBe(true);
      expect(await fitProblems(page, controls)).toEqual([]);
      await page.reload();
      const reloaded = await read(page);
      expect(reloaded.marked).toBe(false);
      expect(figures(live)).toEqual(figures(reloaded));
      expect(await fitProblems(page, controls)).toEqual([]);
      shown.push(reloaded);
    }
    expect(figures(shown[0] as Shown)).toEqual(figures(shown[1] as Shown));
    await Promise.all(pages.map((page) => page.close()));
    return shown[0] as Shown;
  }

  it("restic 0.18: a backup watched live until it ends shows what its reloaded page shows", async () => {
    const host = hosts["0.18"];
    const { jobId, pages } = await watchLive(host, HOLD_ALL, () => runGroup(host));
    host.relay.release();
    const shown = await liveMatchesReloaded(pages, [
      '[data-testid="job-host"]',
      '[data-testid="job-summary-raw"] > summary',
    ]);
    expect(shown.log).not.toContain("repository stats");
    expect(await epilogueOf(jobId)).toMatch(/repository stats: \d+ snapshots, /);
    expect(shown.status).toBe("succeeded");
    expect(shown.percent).toBe("100");
    expect(shown.bar).toEqual({ value: "100", hidden: false });
    expect(shown.files).toBe("3 of 3");
    expect(shown.bytes).toMatch(/^3(\.0+)? MiB of 3(\.0+)? MiB$/);
    expect(shown.summary).toMatch(/New files 3\b/);
    expect(shown.summary).toContain("Data added");
  });

  it("restic 0.18: a compare watched live agrees with its reloaded page on the counts and the table", async () => {
    const host = hosts["0.18"];
    // A second snapshot: one file gone, one new, one changed.
    rmSync(join(host.source, "part-0.bin"));
    writeFileSync(join(host.source, "new.bin"), randomBytes(4096));
    writeFileSync(join(host.source, "part-1.bin"), randomBytes(2 ** 20));
    const second = await waitJob<{ status: string; error: string | null }>(stack.api, await runGroup(host));
    expect(second.status, second.error ?? "").toBe("succeeded");
    const both = await eventually(
      async () => {
        const { snapshots } = await stack.api.get<{ snapshots: Array<{ id: string }> }>(
          `/api/hosts/${host.hostId}/snapshots`,
        );
        return snapshots.length >= 2 ? snapshots : undefined;
      },
      { what: "two snapshots", ...WAIT },
    );
    const { pages } = await watchLive(host, HOLD_ALL, async () => {
      const diff = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${host.hostId}/diff`, {
        snapshot_a: both[1]?.id,
        snapshot_b: both[0]?.id,
      });
      expect(diff.status, JSON.stringify(diff.body)).toBe(201);
      return diff.body.job_id;
    });
    // While it runs nothing is counted yet: no "0 added" that the end contradicts.
    for (const page of pages) {
      expect((await read(page)).diffCounts).toBe("");
    }
    host.relay.release();
    const shown = await liveMatchesReloaded(pages, [
      '[data-testid="job-host"]',
      '[data-testid="diff-table"]',
    ]);
    expect(shown.status).toBe("succeeded");
    const tally = (change: string) => shown.diffRows.filter((row) => row.startsWith(`${change}:`)).length;
    expect(shown.diffRows.some((row) => row.includes("new.bin"))).toBe(true);
    expect(shown.diffRows.some((row) => row.includes("part-0.bin"))).toBe(true);
    expect(shown.diffRows.some((row) => row.includes("part-1.bin"))).toBe(true);
    expect(shown.diffCounts).toMatch(
      new RegExp(`^${tally("added")} added · ${tally("removed")} removed · ${tally("modified")} modified`),
    );
    expect(tally("added")).toBeGreaterThan(0);
    expect(tally("removed")).toBeGreaterThan(0);
    expect(tally("modified")).toBeGreaterThan(0);
  });

  it("restic 0.18: a backup cancelled after asking says who cancelled it and how far it got, with no full bar", async () => {
    const host = hosts["0.18"];
    writeFileSync(join(host.source, "more.bin"), randomBytes(2 ** 20));
    // The pack upload is held: restic reads everything, then waits on the upload.
    const { jobId, pages } = await watchLive(host, HOLD_UPLOAD, () => runGroup(host));
    const [wide, narrow] = pages as [Page, Page];
    await eventually(async () => (await read(wide)).percent === "finishing…", {
      what: "restic to have read everything",
      ...WAIT,
    });
    // Cancel asks first: the confirm button shows only once the question is opened.
    const confirm = narrow.getByTestId("job-cancel-confirm");
    expect(await confirm.isVisible()).toBe(false);
    await narrow.getByTestId("job-cancel-ask").click();
    expect(await confirm.isVisible()).toBe(true);
    expect(await fitProblems(narrow, ['[data-testid="job-cancel-confirm"]'])).toEqual([]);
    // The post lands the narrow page on the job again; the wide one keeps following live.
    await Promise.all([narrow.waitForEvent("load"), confirm.click()]);
    expect(narrow.url()).toBe(`${stack.server.url}/jobs/${jobId}`);
    await narrow.evaluate("window.__watchedLive = true");
    await ended(narrow);
    host.relay.release();
    const shown = await liveMatchesReloaded([wide, narrow], ['[data-testid="job-stopped"]']);
    expect(shown.status).toBe("cancelled");
    expect(shown.stopped).toBe(
      `Cancelled by ${ADMIN.username} at <time> after reading all 4 files, before restic had written the last of it to the repository.`,
    );
    expect(shown.bar).toEqual({ value: null, hidden: true });
    expect(shown.percent).toBe("all read, not all written");
    expect(shown.files).toBe("4 of 4");
    // restic says nothing when interrupted; the log does not just stop.
    expect(shown.log).toContain("cancelled: restic was interrupted; what it had not finished is not kept");
  });

  it("restic 0.14: what the tool does not report is unknown live, reloaded and in the snapshot list, never 0", async () => {
    const host = hosts["0.14"];
    // Held from the start: the pages show what they show before restic has measured anything.
    const { jobId, pages } = await watchLive(host, HOLD_ALL, () => runGroup(host));
    const [wide] = pages as [Page, Page];
    const seen: Shown[] = [await read(wide)];
    // Then only the upload waits: restic reads everything and reports it, the run still live.
    host.relay.release();
    host.relay.hold(HOLD_UPLOAD);
    await eventually(
      async () => {
        const shown = await read(wide);
        seen.push(shown);
        return shown.files === "3 of 3" ? shown : undefined;
      },
      { what: "restic 0.14 to report having read everything", ...WAIT },
    );
    host.relay.release();
    const shown = await liveMatchesReloaded(pages, ['[data-testid="job-host"]']);
    expect(shown.status).toBe("succeeded");
    for (const at of [...seen, shown]) {
      for (const figure of [at.percent, at.files, at.bytes, at.rate, at.eta]) {
        expect(figure, JSON.stringify(at)).not.toMatch(ZERO_FIGURE);
      }
    }
    // Until restic measured something the page said unknown, not the scanner's first "0 of 1".
    expect(seen[0]?.files, JSON.stringify(seen.slice(0, 5))).toBe("–");
    expect(seen[0]?.percent).toBe("–");
    expect(
      seen.some((at) => / of 1$/.test(at.files)),
      JSON.stringify(seen),
    ).toBe(false);
    expect(shown.files).toBe("3 of 3");

    // restic 0.14 keeps no snapshot summary: its size and file count are unknown, not 0.
    const snapshots = await eventually(
      async () => {
        const { snapshots } = await stack.api.get<{
          snapshots: Array<{ id: string; size_bytes: number | null; file_count: number | null }>;
        }>(`/api/hosts/${host.hostId}/snapshots`);
        return snapshots.length >= 1 ? snapshots : undefined;
      },
      { what: `the snapshot of job ${jobId}`, ...WAIT },
    );
    expect(snapshots[0]).toMatchObject({ size_bytes: null, file_count: null });
    for (const width of WIDTHS) {
      const page = await context.newPage();
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${stack.server.url}/hosts/${host.hostId}/snapshots`);
      const row = page.getByTestId("snapshot-row").first();
      expect(await row.getByTestId("snapshot-unknown").allTextContents()).toEqual(["—", "—"]);
      expect(await row.textContent()).not.toMatch(/\b0 B\b/);
      expect(
        await fitProblems(page, ['[data-testid="snapshot-unknown"]', '[data-testid="snapshot-restore"]']),
      ).toEqual([]);
      await page.close();
    }
  });
});

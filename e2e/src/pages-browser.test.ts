/**
 * Issue 17's sweep of every page in headless Chromium against the built server, a real agent,
 * restic 0.18 and rest-server: one host with two snapshots, a succeeded and a failed backup job (so
 * an open alert), a compare, a drill and a restore job (64-character snapshot ids), a schedule.
 * Issue 35.6 adds data that stretches a page: 60-character host names (one approved, one still
 * announced), a long user name, group name and paths, an unused enrolment token. An admin, an
 * operator and a viewer each sign in and open every page their role may see at 1280 and 390 px
 * (both side by side), and the ones it may not at 390 px. Every page must fit the window (`scrollWidth <= innerWidth`), no table
 * may be wider than its box (a scroll box hides columns), the controls a page is for (Change,
 * Edit, Approve, the host list's Open alerts and Last check) must lie inside the window and inside
 * any box that clips them, a title must be free of markup, and a refused or missing page must be
 * an HTML error page in the layout (403, 404), not JSON. One htmx failure shows exactly one
 * toast. Screenshots (every admin page, every error page) go to .cache/screenshots/pages/; the
 * first test photographs the fleet, job and restore pages at 1280 px there as fleet.png, job.png
 * and restore.png, which scripts/screenshots.mjs copies to docs/screenshots/.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentRun, startAgent } from "./support/agent-process.js";
import { ADMIN, type Api, bootstrapAdmin } from "./support/api.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { offScreen, overflowCulprits, wideTables } from "./support/page-fit.js";
import { repoRoot } from "./support/paths.js";
import { type RestServer, startRestServer } from "./support/rest-server.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { LONG_GROUP, LONG_USER, seedSweep } from "./support/sweep-seed.js";
import { FETCHED_TOOLS, missingNote, toolsPresent } from "./support/tools.js";

const PAGE_SHOTS = join(repoRoot, ".cache", "screenshots", "pages");
/**
 * The sweep photographs every page only when asked (FLEETBACK_PAGE_SHOTS=1, to look the pages
 * over): full-page pictures of ~100 pages were a third of this file's time and, on a loaded
 * machine, timed out. A page with a finding is always photographed, so a failure comes with it.
 */
const SHOOT_EVERY_PAGE = process.env.FLEETBACK_PAGE_SHOTS === "1";
const WIDTHS = [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
] as const;
const MISSING_ID = "01JD0000000000000000000000";
/** A job page's snapshot ids, shortened so that they fit. */
const SHORT_IDS = { name: "snapshot id", selector: "code.id-short" } as const;
const PASSWORD = "e2e sweep passphrase";

type Role = "admin" | "operator" | "viewer";
const RANK: Record<Role, number> = { viewer: 1, operator: 2, admin: 3 };

interface Visit {
  name: string;
  path: string;
  /** The least role that may open it; a lesser one gets the 403 page. */
  role: Role;
  /** The page is a 404 for everyone. */
  missing?: boolean;
  /** Waits until the page has loaded what it fetches after the first paint. */
  settle?: (page: Page) => Promise<void>;
  /** Controls that must be on the screen, not off it or in a sideways scroll box. */
  controls?: Control[];
}

interface Control {
  name: string;
  /** CSS selector; every match must be visible, and at least one must exist. */
  selector: string;
  /** The least role that sees it; default the page's. */
  role?: Role;
}

interface Finding {
  where: string;
  problem: string;
}

const missing = missingNote({ Chromium: chromiumPath !== undefined, [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`every page for every role at 1280 and 390 px${missing}`, () => {
  let rest: RestServer;
  let server: ServerProcess;
  let api: Api;
  let browser: Browser;
  let agent: AgentRun | undefined;
  let hostId = "";
  let snapshotId = "";
  let goodJob = "";
  let failedJob = "";
  let diffJob = "";
  let drillJob = "";
  let restoreJob = "";
  let longHostId = "";
  let pendingId = "";
  let policyId = "";
  let rolloutId = "";
  let cataloguedPath = "";

  beforeAll(async () => {
    mkdirSync(PAGE_SHOTS, { recursive: true });
    rest = await startRestServer();
    server = await startServerProcess({ FLEETBACK_LOG_LEVEL: "warn" });
    api = await bootstrapAdmin(server.url, server.output());
    for (const [username, role] of [
      ["operator", "operator"],
      ["viewer", "viewer"],
      [LONG_USER, "viewer"],
    ] as const) {
      const created = await api.send("POST", "/api/users", { username, password: PASSWORD, role });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    browser = await launchBrowser();

    const host = await enrolHost({ api, rest, restic: "0.18", user: "web-repo" });
    hostId = host.hostId;
    agent = startAgent(["run"], host.dirs, host.env);
    await waitHostReady(api, hostId);

    ({
      snapshotId,
      goodJob,
      failedJob,
      diffJob,
      drillJob,
      restoreJob,
      longHostId,
      pendingId,
      policyId,
      cataloguedPath,
    } = await seedSweep(api, rest, hostId));
    // A ring rollout whose rings match no host: its pages, without updating the sweep's agent.
    const [held] = await api.get<Array<{ version: string }>>("/api/agent-versions");
    const rollout = await api.send<{ id: string }>("POST", "/api/agent-rollouts", {
      version: held?.version,
      rings: [
        { selector: "ring=canary" },
        {
          selector: `team in (${LONG_GROUP},storage-and-archive-services),!staging`,
          percent: 10,
          max_failed: 2,
        },
        { selector: "ring=none-such" },
      ],
    });
    expect(rollout.status, JSON.stringify(rollout.body)).toBe(201);
    rolloutId = rollout.body.id;
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await agent?.stop();
    await server?.stop();
    await rest?.stop();
  });

  function visits(): Visit[] {
    const treeLoaded = async (page: Page) => {
      await page.getByTestId("restore-tree").locator("li").first().waitFor({ timeout: 60_000 });
    };
    return [
      { name: "dashboard", path: "/", role: "viewer" },
      {
        name: "hosts",
        path: "/hosts",
        role: "viewer",
        controls: [
          { name: "Open alerts", selector: '[data-testid="host-open-alerts"]' },
          { name: "Last check", selector: '[data-testid="host-check"]' },
        ],
      },
      { name: "host", path: `/hosts/${hostId}`, role: "viewer" },
      { name: "host-long-name", path: `/hosts/${longHostId}`, role: "viewer" },
      {
        name: "host-sources",
        path: `/hosts/${hostId}/sources`,
        role: "viewer",
        controls: [
          {
            name: "schedule Edit",
            selector: 'tr[data-testid^="schedule-"] td[data-label="Actions"] > details > summary',
            role: "operator",
          },
        ],
      },
      { name: "host-jobs", path: `/hosts/${hostId}/jobs`, role: "viewer" },
      { name: "host-snapshots", path: `/hosts/${hostId}/snapshots`, role: "viewer" },
      { name: "host-maintenance", path: `/hosts/${hostId}/maintenance`, role: "viewer" },
      { name: "job", path: `/jobs/${goodJob}`, role: "viewer" },
      { name: "job-failed", path: `/jobs/${failedJob}`, role: "viewer" },
      { name: "job-diff", path: `/jobs/${diffJob}`, role: "viewer", controls: [SHORT_IDS] },
      { name: "job-drill", path: `/jobs/${drillJob}`, role: "viewer", controls: [SHORT_IDS] },
      { name: "job-restore", path: `/jobs/${restoreJob}`, role: "viewer", controls: [SHORT_IDS] },
      { name: "api-docs", path: "/api/docs", role: "viewer" },
      { name: "alerts", path: "/alerts", role: "viewer" },
      { name: "alerts-all", path: "/alerts?state=all", role: "viewer" },
      { name: "tokens", path: "/settings/tokens", role: "viewer" },
      { name: "agent-upgrade", path: "/docs/agent-upgrade", role: "viewer" },
      {
        name: "enroll",
        path: "/enroll",
        role: "operator",
        controls: [
          { name: "Approve", selector: '[data-testid="approve"]' },
          { name: "Revoke token", selector: '[data-testid="revoke-enrolment-token"]' },
        ],
      },
      {
        name: "approve-step",
        path: `/enroll/pending/${pendingId}/approve`,
        role: "operator",
        controls: [{ name: "Approve", selector: '[data-testid="approve-confirm"]' }],
      },
      { name: "policies", path: "/policies", role: "viewer" },
      { name: "evidence", path: "/reports/evidence", role: "viewer" },
      { name: "evidence-print", path: "/reports/evidence/print", role: "viewer" },
      { name: "digest", path: "/reports/digest", role: "viewer" },
      { name: "search", path: "/search?q=*.conf", role: "operator" },
      {
        name: "file-versions",
        path: `/hosts/${hostId}/versions?${new URLSearchParams({ path: cataloguedPath }).toString()}`,
        role: "operator",
      },
      { name: "policy", path: `/policies/${policyId}`, role: "viewer" },
      { name: "agent-rollouts", path: "/agent-rollouts", role: "viewer" },
      { name: "agent-rollout", path: `/agent-rollouts/${rolloutId}`, role: "viewer" },
      { name: "host-long-sources", path: `/hosts/${longHostId}/sources`, role: "viewer" },
      {
        name: "hosts-by-selector",
        path: `/hosts?selector=${encodeURIComponent("env!=none")}`,
        role: "viewer",
      },
      {
        name: "restore",
        path: `/hosts/${hostId}/restore`,
        role: "operator",
        controls: [{ name: "Choose", selector: '[data-testid="restore-choose"]' }],
      },
      {
        name: "restore-snapshot",
        path: `/hosts/${hostId}/snapshots/${snapshotId}/restore`,
        role: "operator",
        settle: treeLoaded,
      },
      {
        name: "users",
        path: "/settings/users",
        role: "admin",
        controls: [{ name: "Change", selector: '[data-testid="user-row"] td[data-label="Change"] > form' }],
      },
      { name: "notifications", path: "/settings/notifications", role: "admin" },
      { name: "audit", path: "/audit", role: "admin" },
      { name: "host-recovery-kit", path: `/hosts/${hostId}/recovery-kit`, role: "admin" },
      { name: "recovery-kit", path: "/recovery-kit", role: "admin" },
      { name: "missing-host", path: `/hosts/${MISSING_ID}`, role: "viewer", missing: true },
      { name: "missing-job", path: `/jobs/${MISSING_ID}`, role: "viewer", missing: true },
      { name: "missing-page", path: "/no/such/page", role: "viewer", missing: true },
    ];
  }

  async function signIn(page: Page, username: string, password: string): Promise<void> {
    await page.goto(`${server.url}/login`);
    await page.getByLabel("Username").fill(username);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${server.url}/`);
  }

  async function check(page: Page, role: Role, width: number, visit: Visit): Promise<Finding[]> {
    const findings: Finding[] = [];
    const where = `${role} ${width}px ${visit.name} (${visit.path})`;
    const response = await page.goto(`${server.url}${visit.path}`);
    const status = response?.status() ?? 0;
    const allowed = RANK[role] >= RANK[visit.role];
    const expected = visit.missing ? 404 : allowed ? 200 : 403;
    if (status !== expected) {
      findings.push({ where, problem: `status ${status}, expected ${expected}` });
    }
    if (expected !== 200) {
      const type = response?.headers()["content-type"] ?? "";
      if (!type.startsWith("text/html")) {
        findings.push({ where, problem: `error answered as ${type}, not an HTML page` });
      }
      const errorPage = page.getByTestId("error-page");
      const shown = (await errorPage.count()) === 1 ? await errorPage.getAttribute("data-status") : "none";
      if (shown !== String(expected)) {
        findings.push({ where, problem: `error page shows status ${shown}` });
      }
      if ((await page.getByTestId("logout").count()) !== 1) {
        findings.push({ where, problem: "the error page lacks the layout's navigation" });
      }
    } else if (visit.settle) {
      await visit.settle(page);
    }
    const title = await page.title();
    if (title.includes("<") || title.includes(">") || !title.endsWith(" · Fleetback")) {
      findings.push({ where, problem: `title ${JSON.stringify(title)}` });
    }
    const widths = await page.locator("html").evaluate((root) => ({
      scroll: root.scrollWidth,
      inner: root.ownerDocument.defaultView?.innerWidth ?? 0,
    }));
    if (widths.scroll > widths.inner) {
      const culprits = await overflowCulprits(page);
      findings.push({
        where,
        problem: `scrollWidth ${widths.scroll} > ${widths.inner}: ${culprits.join(", ")}`,
      });
    }
    for (const problem of await wideTables(page)) {
      findings.push({ where, problem });
    }
    for (const control of expected === 200 ? (visit.controls ?? []) : []) {
      if (RANK[role] < RANK[control.role ?? visit.role]) {
        continue;
      }
      for (const problem of await offScreen(page, control.selector)) {
        findings.push({ where, problem: `${control.name} ${problem}` });
      }
    }
    // When asked, every page of the admin and every error page; JPEG, quicker to encode than PNG.
    const asked = SHOOT_EVERY_PAGE && (role === "admin" || expected !== 200);
    if (!asked && findings.length === 0) {
      return findings;
    }
    await page.screenshot({
      path: join(PAGE_SHOTS, `${role}-${width}-${visit.name}.jpeg`),
      fullPage: true,
      type: "jpeg",
      quality: 60,
    });
    return findings;
  }

  /** One role's sweep in its own browser context: sign in, every page at both widths side by side. */
  async function sweep(role: Role, username: string, password: string): Promise<Finding[]> {
    const context = await browser.newContext({ viewport: WIDTHS[0] });
    try {
      const first = await context.newPage();
      await signIn(first, username, password);
      // Both widths at once, one page each, sharing the context's session.
      const found = await Promise.all(
        WIDTHS.map(async (viewport, index) => {
          const page = index === 0 ? first : await context.newPage();
          await page.setViewportSize(viewport);
          const findings: Finding[] = [];
          for (const visit of visits()) {
            // A refusal does not depend on the width and its page is the error page, which the
            // missing pages check at both: a refused page is opened at the narrow width only.
            const refused = !visit.missing && RANK[role] < RANK[visit.role];
            if (refused && viewport !== WIDTHS[1]) {
              continue;
            }
            findings.push(...(await check(page, role, viewport.width, visit)));
          }
          return findings;
        }),
      );
      return found.flat();
    } finally {
      await context.close();
    }
  }

  it("photographs the host list, a job and the restore browser at 1280 px for the README", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    try {
      await signIn(page, ADMIN.username, ADMIN.password);
      for (const [name, path] of [
        ["fleet", "/hosts"],
        ["job", `/jobs/${goodJob}`],
        ["restore", `/hosts/${hostId}/snapshots/${snapshotId}/restore`],
      ] as const) {
        const response = await page.goto(`${server.url}${path}`);
        expect(response?.status(), path).toBe(200);
        if (name === "restore") {
          await visits()
            .find((visit) => visit.name === "restore-snapshot")
            ?.settle?.(page);
        }
        await page.screenshot({ path: join(PAGE_SHOTS, `${name}.png`) });
      }
    } finally {
      await context.close();
    }
  });

  it("fits every page in the window for each role, with HTML error pages for 403 and 404", async () => {
    // The roles in parallel, each in its own context: the sweep is most of this file's time.
    const found = await Promise.all([
      sweep("admin", ADMIN.username, ADMIN.password),
      sweep("operator", "operator", PASSWORD),
      sweep("viewer", "viewer", PASSWORD),
    ]);
    const findings = found.flat();
    // The signed-out page.
    const context = await browser.newContext();
    const page = await context.newPage();
    for (const viewport of WIDTHS) {
      await page.setViewportSize(viewport);
      await page.goto(`${server.url}/login`);
      const widths = await page.locator("html").evaluate((root) => ({
        scroll: root.scrollWidth,
        inner: root.ownerDocument.defaultView?.innerWidth ?? 0,
      }));
      if (widths.scroll > widths.inner) {
        findings.push({
          where: `signed out ${viewport.width}px login`,
          problem: `scrollWidth ${widths.scroll}`,
        });
      }
    }
    await context.close();
    expect(findings.map((f) => `${f.where}: ${f.problem}`)).toEqual([]);
    // About 130 page loads and 60 screenshots: minutes on a machine busy with other work.
  }, 600_000);

  it("prints the evidence report: the host's backup today, no menu or form on paper, at 1280 and 390 px", async () => {
    for (const viewport of WIDTHS) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      try {
        await signIn(page, "viewer", PASSWORD);
        await page.goto(`${server.url}/reports/evidence`);
        const host = page
          .getByTestId("evidence-host")
          .filter({ has: page.locator(`a[href="/hosts/${hostId}"]`) });
        // The sweep's host backed up today: the group it backed up has a day with a snapshot.
        const covered = await host.getByTestId("evidence-covered").allTextContents();
        expect(
          covered.some((text) => /^[1-9]\d* of \d+$/.test(text)),
          covered.join("; "),
        ).toBe(true);
        await page.emulateMedia({ media: "print" });
        expect(await page.getByTestId("evidence-form").isVisible()).toBe(false);
        expect(await page.getByTestId("logout").isVisible()).toBe(false);
        expect(await host.isVisible()).toBe(true);
        await page.emulateMedia({ media: "screen" });
        await page.getByTestId("evidence-print").click();
        await page.getByTestId("evidence-print-view").waitFor();
        expect(await page.getByTestId("logout").count()).toBe(0);
        const pdf = await page.pdf({ format: "A4" });
        expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
        await page.screenshot({
          path: join(PAGE_SHOTS, `viewer-${viewport.width}-evidence-print.png`),
          fullPage: true,
        });
      } finally {
        await context.close();
      }
    }
  });

  it("shows one toast for one failed htmx request", async () => {
    const context = await browser.newContext({ viewport: WIDTHS[1] });
    const page = await context.newPage();
    try {
      await signIn(page, "operator", PASSWORD);
      await page.goto(`${server.url}/alerts`);
      const { alerts } = await api.get<{ alerts: Array<{ id: string }> }>("/api/alerts?state=open");
      const alertId = alerts[0]?.id ?? "";
      expect(alertId).not.toBe("");
      // Someone else resolves it first; this page's Resolve then fails with a conflict.
      expect((await api.send("POST", `/api/alerts/${alertId}/resolve`)).status).toBe(200);
      await page.getByTestId(`resolve-${alertId}`).click();
      const toasts = page.getByTestId("toast");
      await toasts.first().waitFor({ timeout: 10_000 });
      // Both listeners run in the same task as the response; give a stray second one time to show.
      await page.waitForTimeout(500);
      expect(await toasts.count()).toBe(1);
      expect(await toasts.first().getAttribute("class")).toBe("toast error");
      expect(await page.getByTestId(`alert-${alertId}`).count()).toBe(1);
      await page.screenshot({ path: join(PAGE_SHOTS, "operator-390-toast.png") });
    } finally {
      await context.close();
    }
  });
});

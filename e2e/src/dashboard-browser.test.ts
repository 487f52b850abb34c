/**
 * The fleet dashboard in headless Chromium against the built server, at 1280 and 390 px: three
 * hosts enrolled through the API and held online by the agent's own connection code, which then
 * report what a real agent would (snapshots, repository sizes, a job that succeeds and one that
 * fails). The overdue group is listed first, the numbers link to the filtered host list, and
 * neither page scrolls sideways on a phone.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { AgentConnection } from "@fleetback/agent";
import { encode, type Snapshot } from "@fleetback/protocol";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, type Api, bootstrapAdmin } from "./support/api.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { eventually } from "./support/eventually.js";
import { repoRoot } from "./support/paths.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { enrolSimHost, type SimHost, simConnection } from "./support/sim-agents.js";
import { missingNote } from "./support/tools.js";

const shots = join(repoRoot, ".cache", "screenshots");
const HOUR = 3_600_000;

interface Reporter {
  host: SimHost;
  send(frame: string): void;
  stop(): void;
}

const missing = missingNote({ Chromium: chromiumPath !== undefined });
describe.skipIf(missing !== "")(`fleet dashboard in a real browser${missing}`, () => {
  let server: ServerProcess;
  let api: Api;
  let browser: Browser;
  const connections: AgentConnection[] = [];

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    server = await startServerProcess({ FLEETBACK_LOG_LEVEL: "warn" });
    api = await bootstrapAdmin(server.url, server.output());
    browser = await launchBrowser();
  });
  afterAll(async () => {
    for (const connection of connections) {
      connection.stop();
    }
    await browser?.close();
    await server?.stop();
  });

  /** Enrols `name` and connects it; resolves once the server accepted its hello. */
  async function online(name: string): Promise<Reporter> {
    const host = await enrolSimHost(api, server.url, name);
    let accepted: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      accepted = resolve;
    });
    const connection = simConnection(server.url, host, { onAccepted: () => accepted() });
    connections.push(connection);
    void connection.run();
    await ready;
    return {
      host,
      send: (frame) => {
        if (!connection.sendFrame(frame)) {
          throw new Error(`${name}: not connected`);
        }
      },
      stop: () => connection.stop(),
    };
  }

  async function scheduledGroup(hostId: string, name: string, cron: string): Promise<string> {
    const group = await api.send<{ source_group: { id: string } }>(
      "POST",
      `/api/hosts/${hostId}/source-groups`,
      {
        name,
        includes: [`/${name}`],
      },
    );
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    const schedule = await api.send("POST", `/api/hosts/${hostId}/schedules`, {
      cron,
      source_group_ids: [group.body.source_group.id],
    });
    expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);
    return group.body.source_group.id;
  }

  /** A snapshot the host made itself: under the hostname its (simulated) agent reports. */
  function snapshot(owner: Reporter, index: number, tag: string, at: Date): Snapshot {
    const id = `${index.toString(16)}${tag.length.toString(16)}`.padStart(64, "c");
    return {
      id,
      short_id: id.slice(0, 8),
      time: at.toISOString(),
      hostname: `sim-${owner.host.hostId}`,
      paths: [`/${tag}`],
      tags: [tag],
      size_bytes: 4096,
      file_count: 3,
    };
  }

  /** Runs the group now through the API and reports the job as the agent would. */
  async function ranJob(
    reporter: Reporter,
    groupId: string,
    status: "succeeded" | "failed",
    minutes: number,
  ) {
    const run = await api.send<{ job_id: string }>(
      "POST",
      `/api/hosts/${reporter.host.hostId}/source-groups/${groupId}/run`,
    );
    expect(run.status, JSON.stringify(run.body)).toBe(201);
    const started = new Date(Date.now() - minutes * 60_000);
    reporter.send(
      encode("job.started", { job_id: run.body.job_id, kind: "backup", started_at: started.toISOString() }),
    );
    reporter.send(
      encode("job.finished", {
        job_id: run.body.job_id,
        status,
        exit_code: status === "succeeded" ? 0 : 1,
        ...(status === "failed" ? { error: "Fatal: unable to open repository" } : {}),
      }),
    );
  }

  async function noSidewaysScroll(page: Page): Promise<void> {
    const widths = await page.locator("html").evaluate((root) => ({
      scroll: root.scrollWidth,
      client: root.clientWidth,
    }));
    expect(widths.scroll, JSON.stringify(widths)).toBeLessThanOrEqual(widths.client);
  }

  /**
   * The timeline's "now" is a line inside the chart with room after it, each of today's bars is
   * wide enough to point at; the growth chart's axis covers the whole window, the days before the
   * first report (today: the sizes were reported just now) a stretch saying so, inside the chart.
   */
  async function chartsHaveRoom(page: Page): Promise<void> {
    const timeline = page.getByTestId("timeline-svg");
    const box = await timeline.boundingBox();
    const now = await timeline.locator("line.timeline-now").boundingBox();
    expect(box && now && now.x < box.x + box.width * 0.95, JSON.stringify({ box, now })).toBe(true);
    for (const bar of await timeline.locator("rect.timeline-bar").all()) {
      const drawn = await bar.boundingBox();
      expect(drawn?.width ?? 0).toBeGreaterThanOrEqual(3);
      expect((drawn?.x ?? 0) + (drawn?.width ?? 0)).toBeLessThanOrEqual(
        (box?.x ?? 0) + (box?.width ?? 0) + 0.5,
      );
    }
    const growth = page.getByTestId("growth").locator("svg.chart");
    const noData = growth.getByTestId("chart-no-data");
    expect(await noData.textContent()).toBe(`no data before ${new Date().toISOString().slice(0, 10)}`);
    const chartBox = await growth.boundingBox();
    const label = await noData.locator("text").boundingBox();
    expect(
      chartBox && label && label.x >= chartBox.x && label.x + label.width <= chartBox.x + chartBox.width,
      JSON.stringify({ chartBox, label }),
    ).toBe(true);
  }

  it("lists the overdue group first and links each number to its hosts, at 1280 and 390 px", async () => {
    const now = Date.now();
    const web = await online("web-fresh");
    const db = await online("db-overdue");
    const mail = await online("mail-failing");

    const etc = await scheduledGroup(web.host.hostId, "etc", "0 3 * * *");
    await scheduledGroup(db.host.hostId, "pg", "0 2 * * *");
    await scheduledGroup(db.host.hostId, "old", "0 2 * * *");
    const mailGroup = await scheduledGroup(mail.host.hostId, "mail", "0 3 * * *");

    const refreshed = new Date(now).toISOString();
    web.send(
      encode("snapshots.report", {
        snapshots: [snapshot(web, 1, "etc", new Date(now - 0.2 * HOUR))],
        refreshed_at: refreshed,
      }),
    );
    db.send(
      encode("snapshots.report", {
        snapshots: [
          snapshot(db, 2, "pg", new Date(now - 72 * HOUR)),
          snapshot(db, 3, "old", new Date(now - 144 * HOUR)),
        ],
        refreshed_at: refreshed,
      }),
    );
    mail.send(
      encode("snapshots.report", {
        snapshots: [snapshot(mail, 4, "mail", new Date(now - HOUR))],
        refreshed_at: refreshed,
      }),
    );
    web.send(encode("repo.stats", { raw_size_bytes: 3 * 1024 ** 3, total_size_bytes: 5 * 1024 ** 3 }));
    db.send(encode("repo.stats", { raw_size_bytes: 12 * 1024 ** 3 }));
    mail.send(encode("repo.stats", { raw_size_bytes: 700 * 1024 ** 2 }));
    await ranJob(web, etc, "succeeded", 50);
    await ranJob(mail, mailGroup, "failed", 20);

    const numbers = await eventually(
      async () => {
        const body = await api.get<{ hosts: Record<string, number> }>("/api/dashboard");
        return body.hosts.overdue === 1 && body.hosts.failing === 1 && body.hosts.online === 3
          ? body.hosts
          : undefined;
      },
      { what: "the dashboard to count the overdue and the failing host" },
    );
    expect(numbers).toMatchObject({ total: 3, online: 3, offline: 0, overdue: 1, failing: 1 });

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${server.url}/login`);
    await page.getByLabel("Username").fill(ADMIN.username);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${server.url}/`);

    const first = page.getByTestId("attention-row").first();
    expect(await first.getAttribute("data-state")).toBe("overdue");
    expect(await first.locator("td").nth(0).textContent()).toBe("db-overdue");
    expect(await first.locator("td").nth(1).textContent()).toBe("old");
    expect(await page.getByTestId("attention-row").nth(1).locator("td").nth(1).textContent()).toBe("pg");
    expect(await page.getByTestId("count-overdue").locator("strong").textContent()).toBe("1");
    expect(await page.getByTestId("count-failing").locator("strong").textContent()).toBe("1");
    expect(await page.locator("[data-testid=timeline-svg] rect.timeline-bar").count()).toBe(2);
    expect(
      await page.locator('[data-testid=timeline-svg] rect.timeline-bar[data-status="failed"]').count(),
    ).toBe(1);
    expect(await page.getByTestId("stored-now").textContent()).toBe("15.7 GiB");
    expect(await page.getByTestId("dashboard-alert").count()).toBe(1);
    await chartsHaveRoom(page);
    await page.screenshot({ path: join(shots, "dashboard-1280.png"), fullPage: true });

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    expect(await page.getByTestId("attention-row").first().getAttribute("data-state")).toBe("overdue");
    await noSidewaysScroll(page);
    const svgWidth = await page
      .getByTestId("timeline-svg")
      .evaluate((svg) => svg.getBoundingClientRect().width);
    expect(svgWidth).toBeLessThanOrEqual(390);
    await chartsHaveRoom(page);
    await page.screenshot({ path: join(shots, "dashboard-390.png"), fullPage: true });

    await page.getByTestId("count-overdue").click();
    await page.waitForURL(`${server.url}/hosts?state=overdue`);
    const rows = page.getByTestId("host-row");
    expect(await rows.count()).toBe(1);
    expect(await rows.first().getAttribute("data-host-id")).toBe(db.host.hostId);
    await noSidewaysScroll(page);
    await page.screenshot({ path: join(shots, "hosts-overdue-390.png"), fullPage: true });

    // The whole list at 390 px sorted by status: the failing host first, whatever its connection;
    // its last job and freshness columns fit without sideways scrolling.
    await page.goto(`${server.url}/hosts?sort=status`);
    const order = await page
      .getByTestId("host-row")
      .evaluateAll((found) => found.map((row) => row.getAttribute("data-host-id")));
    expect(order).toEqual([mail.host.hostId, db.host.hostId, web.host.hostId]);
    await noSidewaysScroll(page);
    await page.screenshot({ path: join(shots, "hosts-390.png"), fullPage: true });
    // The filter form searches by tag; htmx swaps the list and pushes the URL.
    await page.getByTestId("fleet-q").fill("pg");
    await page.getByTestId("fleet-filter-submit").click();
    await page.waitForURL(/[?&]q=pg(&|$)/);
    await page.locator('[data-testid="fleet-total"]', { hasText: /^1$/ }).waitFor();
    expect(await page.getByTestId("host-row").first().getAttribute("data-host-id")).toBe(db.host.hostId);
    expect(await page.getByTestId("host-freshness").first().textContent()).toBe("overdue");
    await noSidewaysScroll(page);
    await page.close();
  });

  // Issue 35.4: the dashboard refreshes itself as the host list does; an agent that stops is
  // counted offline on the open page, which is not reloaded.
  it("counts an agent that stopped as offline without a reload, at 1280 and 390 px", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${server.url}/login`);
    await page.getByLabel("Username").fill(ADMIN.username);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${server.url}/`);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      const leaving = await online(`leaving-${width}`);
      const onlineNow = await eventually(
        async () => {
          const body = await api.get<{ hosts: { online: number; total: number } }>("/api/dashboard");
          return body.hosts.online === body.hosts.total - (width === 1280 ? 0 : 1)
            ? body.hosts.online
            : undefined;
        },
        { what: `leaving-${width} to be counted online` },
      );
      await page.goto(`${server.url}/`);
      const count = page.getByTestId("count-online").locator("strong");
      expect(await count.textContent()).toBe(String(onlineNow));
      await page.evaluate(() => {
        (globalThis as unknown as { sameDocument: boolean }).sameDocument = true;
      });
      leaving.stop();
      await eventually(async () => (await count.textContent()) === String(onlineNow - 1), {
        what: `the open dashboard at ${width} px to count ${onlineNow - 1} online`,
      });
      expect(await page.getByTestId("count-offline").locator("strong").textContent()).toBe(
        String(width === 1280 ? 1 : 2),
      );
      expect(
        await page.evaluate(() => (globalThis as unknown as { sameDocument?: boolean }).sameDocument),
      ).toBe(true);
      await noSidewaysScroll(page);
    }
    await page.close();
  });
});

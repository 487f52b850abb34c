/**
 * Issues 35.8 and 36.2 in headless Chromium against the built server, a real agent, restic 0.18
 * and rest-server. The server's zone (FLEETBACK_TZ) is New York and the reader's is Berlin: on the
 * host page, its job list and the audit page, at 1280 and 390 px, every <time> reads as the
 * reader's wall clock with its zone ("28 Nov, 11:19 CET"), with ISO 8601 as title and datetime,
 * and the page still fits; without script the server's zone stands. A backup behind an upload cap
 * is watched live: the byte figures the page writes from the stream's frames are the words
 * format.js gives for those numbers, and the reloaded page prints the final ones the same way.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgent } from "./support/agent-process.js";
import { ADMIN } from "./support/api.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { overflowCulprits } from "./support/page-fit.js";
import { startSlowBackup } from "./support/slow-backup.js";
import { useStack, waitJob } from "./support/stack.js";
import { FETCHED_TOOLS, missingNote, toolsPresent } from "./support/tools.js";

const WIDTHS = [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
] as const;
/** A moment as the pages print it, in Berlin (CET in winter, CEST in summer). */
const BERLIN_TEXT = /^\d{1,2} [A-Z][a-z]{2}( \d{4})?, \d\d:\d\d CES?T$/;
/** The same, as the server sends it from New York (en-GB names it by its offset). */
const NEW_YORK_TEXT = /^\d{1,2} [A-Z][a-z]{2}( \d{4})?, \d\d:\d\d GMT-[45]$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/;

interface Progress {
  bytes_done?: number;
  bytes_total?: number;
}

interface ShownTime {
  text: string;
  title: string;
  datetime: string;
}

function timesOn(page: Page): Promise<ShownTime[]> {
  return page.locator("main time[datetime]").evaluateAll((times) =>
    times.map((time) => ({
      text: (time.textContent ?? "").trim(),
      title: time.getAttribute("title") ?? "",
      datetime: time.getAttribute("datetime") ?? "",
    })),
  );
}

/** "1.50 MiB of 6.00 MiB", as format.js (the module the page loaded) writes these numbers. */
function bytesText(page: Page, progress: Progress): Promise<string> {
  return page.evaluate((p) => {
    const format = (globalThis as unknown as { fleetbackFormat: { formatBytes(value: unknown): string } })
      .fleetbackFormat;
    const done = format.formatBytes(p.bytes_done);
    return typeof p.bytes_total === "number" ? `${done} of ${format.formatBytes(p.bytes_total)}` : done;
  }, progress);
}

const missing = missingNote({ Chromium: chromiumPath !== undefined, [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`one time and byte format in the browser${missing}`, () => {
  const stack = useStack({ serverEnv: { FLEETBACK_TZ: "America/New_York" } });
  let browser: Browser;
  let hostId = "";
  const contexts: BrowserContext[] = [];

  async function signedIn(options: { width: number; height: number; script: boolean }): Promise<Page> {
    const context = await browser.newContext({
      viewport: { width: options.width, height: options.height },
      timezoneId: "Europe/Berlin",
      javaScriptEnabled: options.script,
    });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${stack.server.url}/login`);
    await page.getByLabel("Username").fill(ADMIN.username);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${stack.server.url}/`);
    return page;
  }

  beforeAll(async () => {
    browser = await launchBrowser();
    const host = await enrolHost({ api: stack.api, rest: stack.rest, restic: "0.18", user: "times" });
    stack.agents.push(startAgent(["run"], host.dirs, host.env));
    await waitHostReady(stack.api, host.hostId);
    hostId = host.hostId;
  });
  afterAll(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await browser?.close();
  });

  it("writes live byte figures as the reloaded page does, and live moments in the reader's zone", async () => {
    const page = await signedIn({ ...WIDTHS[0], script: true });
    const { jobId } = await startSlowBackup(stack.api, hostId, { mib: 6, upKbps: 512 });
    // Every progress the stream hands the page after its first state, to know which numbers the
    // script's figures were made of.
    const frames: Progress[] = [];
    page.on("websocket", (socket) => {
      socket.on("framereceived", ({ payload }) => {
        try {
          const message = JSON.parse(String(payload)) as { type: string; payload: Progress };
          if (message.type === "job.progress") {
            frames.push(message.payload);
          }
        } catch {
          // Not JSON: not a frame the page reads either.
        }
      });
    });
    await page.goto(`${stack.server.url}/jobs/${jobId}`);

    // While the job runs, the figure shown is format.js's words for the newest frame's numbers:
    // the script wrote it (a copy of its own that wrote them otherwise would never match).
    const live = await eventually(
      async () => {
        const latest = frames.at(-1);
        const status = (await page.getByTestId("job-status").textContent())?.trim();
        const shown = (await page.getByTestId("job-bytes").textContent())?.trim() ?? "";
        return latest && status === "running" && shown === (await bytesText(page, latest)) ? shown : false;
      },
      { what: "a live byte figure from the stream", timeoutMs: 90_000, intervalMs: 100 },
    );
    expect(live).toMatch(/^[\d.]+ (B|KiB|MiB) of [\d.]+ (B|KiB|MiB)$/);
    const started = await page.locator("#job-started-at time").evaluate((time) => ({
      text: (time.textContent ?? "").trim(),
      title: time.getAttribute("title") ?? "",
    }));
    expect(started.text).toMatch(BERLIN_TEXT);
    expect(started.title).toMatch(ISO);

    const done = await waitJob<{ status: string; progress: Progress | null }>(stack.api, jobId);
    expect(done.status).toBe("succeeded");
    await page.reload();
    const reloaded = (await page.getByTestId("job-bytes").textContent())?.trim();
    expect(reloaded).toBe(await bytesText(page, done.progress ?? {}));
    for (const time of await timesOn(page)) {
      expect(time.text).toMatch(BERLIN_TEXT);
    }
  });

  it("prints every moment in the reader's zone with ISO on hover, at 1280 and 390 px", async () => {
    const paths = [`/hosts/${hostId}`, `/hosts/${hostId}/jobs`, "/audit"];
    for (const size of WIDTHS) {
      const page = await signedIn({ ...size, script: true });
      for (const path of paths) {
        await page.goto(`${stack.server.url}${path}`);
        // app.js has rewritten every <time> once no text is left in the server's zone.
        const times = await eventually(
          async () => {
            const found = await timesOn(page);
            return found.length > 0 && found.every((time) => !NEW_YORK_TEXT.test(time.text)) && found;
          },
          { what: `${path}: times in the reader's zone` },
        );
        for (const time of times) {
          expect(time.text, `${path} at ${size.width} px`).toMatch(BERLIN_TEXT);
          expect(time.title).toMatch(ISO);
          expect(time.datetime).toBe(time.title);
        }
        // The longer words still fit the window (a visually hidden table head may stick out).
        const widths = await page.locator("html").evaluate((root) => ({
          scroll: root.scrollWidth,
          inner: root.ownerDocument.defaultView?.innerWidth ?? 0,
        }));
        const where = `${path} at ${size.width} px: ${(await overflowCulprits(page)).join(", ")}`;
        expect(widths.scroll, where).toBeLessThanOrEqual(widths.inner);
      }
    }
  });

  it("leaves the server's zone standing without script", async () => {
    const page = await signedIn({ ...WIDTHS[1], script: false });
    await page.goto(`${stack.server.url}/audit`);
    const times = await timesOn(page);
    expect(times.length).toBeGreaterThan(0);
    for (const time of times) {
      expect(time.text).toMatch(NEW_YORK_TEXT);
      expect(time.title).toMatch(ISO);
    }
  });
});

/**
 * Host labels (issue 37) in headless Chromium against the built server, at 1280 and 390 px: hosts
 * enrolled with a labelled token carry its labels; an operator edits a host's labels on its page;
 * the host list filters by a selector (the state tabs keep it) and shows labels as chips; its bulk
 * form sets and removes labels on every host the selector matches; neither page scrolls sideways,
 * long labels included.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, type Api, bootstrapAdmin } from "./support/api.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { overflowCulprits } from "./support/page-fit.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { missingNote } from "./support/tools.js";

// Long enough to overflow a phone if a chip did not wrap.
const LONG = {
  "example.com/long-key-of-some-length": "a-value-of-sixty-three-characters-a-value-of-sixty-three-chars",
};

async function enrol(
  api: Api,
  serverUrl: string,
  name: string,
  labels: Record<string, string>,
): Promise<string> {
  const minted = await api.send<{ token: string }>("POST", "/api/enrollment-tokens", { labels });
  expect(minted.status).toBe(201);
  const res = await fetch(`${serverUrl}/api/agents/enroll`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Connection: "close" },
    body: JSON.stringify({
      token: minted.body.token,
      hostname: name,
      os: "linux",
      arch: "x64",
      agent_version: "0.1.0",
      tool_version: "0.18.0",
    }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { host_id: string }).host_id;
}

async function fits(page: Page, width: number): Promise<void> {
  const scroll = await page.locator("html").evaluate((root) => root.scrollWidth);
  expect(scroll, (await overflowCulprits(page)).join(", ")).toBeLessThanOrEqual(width);
}

const missing = missingNote({ Chromium: chromiumPath !== undefined });
describe.skipIf(missing !== "")(`host labels in the browser${missing}`, () => {
  let server: ServerProcess;
  let browser: Browser;
  let api: Api;
  let dbHost: string;

  beforeAll(async () => {
    server = await startServerProcess();
    api = await bootstrapAdmin(server.url, server.output());
    dbHost = await enrol(api, server.url, "db-1", { env: "prod", role: "db", ...LONG });
    await enrol(api, server.url, "web-1", { env: "prod", role: "web" });
    await enrol(api, server.url, "dev-1", { env: "dev", role: "db" });
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it.each([1280, 390])(
    "edits a host's labels, filters the list by selector and changes the matched hosts' labels at %i px",
    async (width) => {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      await page.goto(`${server.url}/login`);
      await page.getByLabel("Username").fill(ADMIN.username);
      await page.getByLabel("Password").fill(ADMIN.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(`${server.url}/`);

      await page.goto(`${server.url}/hosts/${dbHost}`);
      const chips = page.getByTestId("host-labels").getByTestId("label-chip");
      expect(await chips.allTextContents()).toContain("env=prod");
      await fits(page, width);
      const tier = width === 390 ? "phone" : "desk";
      const input = page.getByTestId("labels-input");
      // The box holds every label as key=value; the long one stays, the others change.
      expect(await input.inputValue()).toContain("example.com/long-key-of-some-length=");
      const long = Object.entries(LONG).map(([key, value]) => `${key}=${value}`);
      await input.fill(["env=prod", "role=primary", `tier=${tier}`, ...long].join(", "));
      await page.getByTestId("labels-submit").click();
      await page.waitForURL(`${server.url}/hosts/${dbHost}`);
      expect(await chips.allTextContents()).toEqual(
        expect.arrayContaining(["env=prod", "role=primary", `tier=${tier}`]),
      );
      expect(
        (await api.get<{ labels: Record<string, string> }>(`/api/hosts/${dbHost}/labels`)).labels,
      ).toMatchObject({
        role: "primary",
        tier,
      });
      await fits(page, width);

      await page.goto(`${server.url}/hosts`);
      await page.getByTestId("fleet-selector").fill("env=prod, role in (primary,web), !staging");
      await page.getByTestId("fleet-filter-submit").click();
      await expect
        .poll(async () => (await page.locator("#fleet-list td[data-label=Host] a").allTextContents()).sort())
        .toEqual(["db-1", "web-1"]);
      expect(page.url()).toContain("selector=");
      expect(await page.locator("#fleet-list").getByTestId("label-chip").allTextContents()).toContain(
        "role=web",
      );
      await fits(page, width);
      // A state tab keeps the selector: both hosts are offline, none online.
      await page.getByTestId("hosts-filter-offline").click();
      await page.waitForURL(/state=offline/);
      expect(page.url()).toContain("selector=");
      expect((await page.locator("#fleet-list td[data-label=Host] a").allTextContents()).sort()).toEqual([
        "db-1",
        "web-1",
      ]);

      // The list's bulk form changes every host the selector matches; the desk run adds a key
      // that the phone run removes again.
      const prod = encodeURIComponent("env=prod");
      await page.goto(`${server.url}/hosts?selector=${prod}`);
      await page.getByTestId("bulk-labels").locator("summary").click();
      await page
        .getByTestId("bulk-labels-set")
        .fill(width === 390 ? "wave=phone" : "wave=desk\ndesk-only=yes");
      await page.getByTestId("bulk-labels-remove").fill(width === 390 ? "desk-only" : "");
      await fits(page, width);
      await page.getByTestId("bulk-labels-submit").click();
      await page.waitForURL(/labels_changed=/);
      expect(await page.getByTestId("labels-outcome").textContent()).toBe(
        "Labels changed: 2 matched, 2 changed.",
      );
      await fits(page, width);
      const { hosts } = await api.get<{ hosts: Array<{ name: string; labels: Record<string, string> }> }>(
        "/api/hosts",
      );
      const labelsOf = (name: string) => hosts.find((h) => h.name === name)?.labels ?? {};
      for (const name of ["db-1", "web-1"]) {
        expect(labelsOf(name).wave).toBe(width === 390 ? "phone" : "desk");
        expect(labelsOf(name)["desk-only"]).toBe(width === 390 ? undefined : "yes");
      }
      expect(labelsOf("dev-1")).toEqual({ env: "dev", role: "db" });
      await page.close();
    },
    120_000,
  );
});

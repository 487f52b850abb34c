/**
 * The enrol page's minted secrets in headless Chromium against the built server, at phone width:
 * the install command wraps instead of scrolling sideways, its copy button (a served script, no
 * inline code under the CSP) puts the exact command on the clipboard, and the two htpasswd lines
 * work with the real htpasswd: the -c one creates a new password file, the other adds a second
 * user to it, and both passwords verify. The generated repository password and a new API token
 * have copy buttons too.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { FETCHED_TOOLS, HTPASSWD_DIR, missingNote, toolsPresent } from "./support/tools.js";

const PASSWORD = "browser operator passphrase";
const HTPASSWD_PATH = "/var/lib/rest-server/.htpasswd";

const missing = missingNote({ Chromium: chromiumPath !== undefined, [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`enrol page copy button and htpasswd lines${missing}`, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    server = await startServerProcess();
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    page = await context.newPage();
    const link = /(http\S+\/bootstrap\?token=\S+)/.exec(server.output())?.[1] ?? "";
    await page.goto(link);
    await page.getByTestId("username").fill("admin");
    await page.getByTestId("password").fill(PASSWORD);
    await page.getByTestId("submit").click();
    await page.waitForURL(`${server.url}/`);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function mintFor(user: string): Promise<{ newFile: string; append: string; login: string }> {
    await page.goto(`${server.url}/enroll`);
    await page.locator('input[name="repository_url"]').fill(`rest:http://127.0.0.1:8000/${user}/`);
    await page.locator('input[name="repository_username"]').fill(user);
    await page.getByTestId("mint").click();
    await page.getByTestId("minted").waitFor();
    return {
      newFile: (await page.getByTestId("htpasswd-new-file-snippet").textContent()) ?? "",
      append: (await page.getByTestId("htpasswd-snippet").textContent()) ?? "",
      // The htpasswd lines hold the login, apart from the repository password (issue 31).
      login: (await page.getByTestId("generated-login-password").textContent()) ?? "",
    };
  }

  it("wraps the install command at 390 px and copies it exactly", async () => {
    await mintFor("web-01");
    const pre = page.getByTestId("install-command");
    const command = (await pre.textContent()) ?? "";
    expect(command).toMatch(/^curl -fsSL '.+\/install\/install\.sh' \| sudo bash -s -- --token 'fbe_[^']+'$/);
    const box = await pre.evaluate((el) => ({
      scroll: el.scrollWidth,
      client: el.clientWidth,
      height: el.clientHeight,
    }));
    expect(box.scroll).toBeLessThanOrEqual(box.client);
    const pageWidth = await page.locator("html").evaluate((root) => root.scrollWidth);
    expect(pageWidth).toBeLessThanOrEqual(390);

    const button = page.getByTestId("copy-install-command");
    expect(await button.isVisible()).toBe(true);
    await button.click();
    await expect.poll(() => button.getAttribute("data-copied")).toBe("copied");
    // A string expression: the e2e package compiles without the DOM library.
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(command);
  }, 120_000);

  it("copies the generated repository password and a new API token exactly (issue 35)", async () => {
    await mintFor("web-03");
    const password = (await page.getByTestId("generated-password").textContent()) ?? "";
    expect(password.length).toBeGreaterThan(0);
    const copyPassword = page.getByTestId("copy-generated-password");
    expect(await copyPassword.isVisible()).toBe(true);
    await copyPassword.click();
    await expect.poll(() => copyPassword.getAttribute("data-copied")).toBe("copied");
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(password);

    await page.goto(`${server.url}/settings/tokens`);
    await page.locator('input[name="name"]').fill("report script");
    await page.getByTestId("token-form").locator('button[type="submit"]').click();
    const token = (await page.getByTestId("new-token-value").textContent()) ?? "";
    expect(token.length).toBeGreaterThan(0);
    const copyToken = page.getByTestId("copy-new-token");
    expect(await copyToken.isVisible()).toBe(true);
    await copyToken.click();
    await expect.poll(() => copyToken.getAttribute("data-copied")).toBe("copied");
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(token);
  }, 120_000);

  it("gives htpasswd lines that create a new file and then add to it", async () => {
    const first = await mintFor("web-01");
    const second = await mintFor("web-02");
    const dir = mkdtempSync(join(tmpdir(), "fleetback-htpasswd-"));
    const file = join(dir, ".htpasswd");
    const env = { ...process.env, PATH: `${HTPASSWD_DIR}:${process.env.PATH ?? ""}` };
    const run = (snippet: string) => {
      expect(snippet).toContain(HTPASSWD_PATH);
      execFileSync("sh", ["-c", snippet.replace(HTPASSWD_PATH, file)], { env, stdio: "pipe" });
    };
    run(first.newFile);
    run(second.append);
    const lines = readFileSync(file, "utf8").trim().split("\n");
    expect(lines.map((line) => line.split(":")[0])).toEqual(["web-01", "web-02"]);
    expect(lines.every((line) => /^[^:]+:\$2y\$/.test(line))).toBe(true);
    for (const [user, password] of [
      ["web-01", first.login],
      ["web-02", second.login],
    ] as const) {
      execFileSync("htpasswd", ["-v", "-i", file, user], { env, input: `${password}\n`, stdio: "pipe" });
    }
  }, 120_000);
});

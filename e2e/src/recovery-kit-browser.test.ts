/**
 * Issue 35, point 9: the recovery kit used for real. A repository on a real rest-server, behind a
 * login of its own, holds a backup made by restic 0.18; its credentials are bound to a host of the
 * built server. An admin in headless Chromium opens the host page, follows "Recovery kit", is
 * refused with a wrong password, then downloads the kit with the right one. The kit's script,
 * run by sh with the real restic and nothing of Fleetback, lists the snapshot, and the kit's own
 * "restore one file" command brings the file back. The canary passwords are in the download and
 * nowhere in what the server printed. The host page action and the password form are checked at
 * 1280 and 390 px for horizontal overflow.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, type Api, bootstrapAdmin } from "./support/api.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { type RestServer, startRestServer } from "./support/rest-server.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { FETCHED_TOOLS, missingNote, RESTIC, toolsPresent } from "./support/tools.js";

const REPO_CANARY = "Canary-Kit-E2E-Repo-6402";
const LOGIN_CANARY = "Canary-Kit-E2E-Login-1977";
const USER = "kit-host";
const FILE_BODY = "the one file to bring back\n";

function run(
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { env, cwd, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The widest elements past the window's right edge; empty when the page fits. */
function overflow(page: Page): Promise<string[]> {
  return page.locator("html").evaluate((root) => {
    const limit = root.ownerDocument.defaultView?.innerWidth ?? root.clientWidth;
    if (root.scrollWidth <= limit) {
      return [];
    }
    return (Array.from(root.querySelectorAll("body *")) as Array<typeof root>)
      .filter((el) => el.getBoundingClientRect().right > limit + 0.5)
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}`);
  });
}

const missing = missingNote({ Chromium: chromiumPath !== undefined, [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`recovery kit in the browser and in restic${missing}`, () => {
  let rest: RestServer;
  let server: ServerProcess;
  let api: Api;
  let browser: Browser;
  let hostId: string;
  let resticHost: string;
  let sourceFile: string;
  const work = mkdtempSync(join(tmpdir(), "fleetback-kit-e2e-"));

  beforeAll(async () => {
    rest = await startRestServer();
    server = await startServerProcess();
    api = await bootstrapAdmin(server.url, server.output());
    browser = await launchBrowser();
    await rest.runHtpasswdSnippet(`htpasswd -b -B /var/lib/rest-server/.htpasswd ${USER} '${LOGIN_CANARY}'`);

    const minted = await api.send<{ token: string }>("POST", "/api/enrollment-tokens", {});
    const enrolled = await fetch(`${server.url}/api/agents/enroll`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Connection: "close" },
      body: JSON.stringify({
        token: minted.body.token,
        hostname: "kit-web",
        os: "linux",
        arch: "amd64",
        agent_version: "0.1.0",
        tool_version: "",
      }),
    });
    hostId = ((await enrolled.json()) as { host_id: string }).host_id;
    resticHost = (await api.get<{ host: { restic_host: string } }>(`/api/hosts/${hostId}`)).host.restic_host;
    const url = `${rest.url.replace("http://", "rest:http://")}/${USER}/`;
    const bound = await api.send("PUT", `/api/hosts/${hostId}/repo-credentials`, {
      url,
      username: USER,
      password: REPO_CANARY,
      login_password: LOGIN_CANARY,
    });
    expect(bound.status).toBe(200);

    // The backup the agent would have made, by restic itself with the same credentials.
    const source = join(work, "source", "etc");
    mkdirSync(source, { recursive: true });
    sourceFile = join(source, "motd");
    writeFileSync(sourceFile, FILE_BODY);
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: work,
      RESTIC_REPOSITORY: url.replace("rest:http://", `rest:http://${USER}:${LOGIN_CANARY}@`),
      RESTIC_PASSWORD: REPO_CANARY,
    };
    for (const args of [["init"], ["backup", "--host", resticHost, join(work, "source")]]) {
      const done = await run(RESTIC["0.18"], args, env);
      expect(done.code, done.stderr).toBe(0);
    }
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await rest?.stop();
  });

  async function signedIn(width: number, height: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height }, acceptDownloads: true });
    const page = await context.newPage();
    await page.goto(`${server.url}/login`);
    await page.getByLabel("Username").fill(ADMIN.username);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${server.url}/`);
    return page;
  }

  it("gives the kit after the password again, and its script reaches the backup with restic alone", async () => {
    const page = await signedIn(1280, 800);
    await page.goto(`${server.url}/hosts/${hostId}`);
    await page.getByTestId("recovery-kit-action").click();
    await page.waitForURL(`${server.url}/hosts/${hostId}/recovery-kit`);
    expect(await overflow(page)).toEqual([]);

    await page.getByTestId("recovery-kit-password").fill("not the password");
    await page.getByTestId("recovery-kit-download").click();
    await expect
      .poll(() => page.getByTestId("recovery-kit-error").textContent())
      .toContain("password: is wrong");

    await page.getByTestId("recovery-kit-password").fill(ADMIN.password);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByTestId("recovery-kit-download").click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^fleetback-recovery-kit-kit-web-\d{4}-\d{2}-\d{2}\.md$/);
    const kit = readFileSync(await download.path(), "utf8");
    expect(kit).toContain(REPO_CANARY);
    expect(kit).toContain(LOGIN_CANARY);
    expect(kit).toContain(resticHost);

    const script = /```sh\n(#!\/bin\/sh\n[\s\S]*?)```/.exec(kit)?.[1];
    const name = /Save this as `([^`]+)`/.exec(kit)?.[1];
    expect(script && name).toBeTruthy();
    const dir = join(work, "kit");
    mkdirSync(dir);
    writeFileSync(join(dir, name as string), script as string, { mode: 0o600 });
    // Nothing of Fleetback: a fresh HOME, no RESTIC_* of ours, restic only as the kit says to name it.
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, RESTIC: RESTIC["0.18"] };
    const listed = await run("sh", [name as string], env, dir);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(resticHost);
    expect(listed.stdout).toMatch(/1 snapshots/);

    const restoreLine = new RegExp(`^sh ${name} restore latest .*$`, "m").exec(kit)?.[0];
    expect(restoreLine).toContain(`--host ${resticHost}`);
    const target = join(work, "restored");
    const restore = (restoreLine as string)
      .replace("/tmp/restore", target)
      .replace("/path/to/the/file", sourceFile);
    const restored = await run("sh", ["-c", restore], env, dir);
    expect(restored.code, restored.stderr).toBe(0);
    expect(readFileSync(join(target, sourceFile), "utf8")).toBe(FILE_BODY);

    const printed = server.output();
    for (const secret of [REPO_CANARY, LOGIN_CANARY, ADMIN.password]) {
      expect(printed).not.toContain(secret);
    }
    await page.context().close();
  }, 120_000);

  it("fits a 390 px phone: the host page action and the password form", async () => {
    const page = await signedIn(390, 844);
    await page.goto(`${server.url}/hosts/${hostId}`);
    await expect.poll(() => page.getByTestId("recovery-kit-action").isVisible()).toBe(true);
    expect(await overflow(page)).toEqual([]);
    await page.getByTestId("recovery-kit-action").click();
    await page.waitForURL(`${server.url}/hosts/${hostId}/recovery-kit`);
    await expect.poll(() => page.getByTestId("recovery-kit-password").isVisible()).toBe(true);
    expect(await overflow(page)).toEqual([]);
    await page.goto(`${server.url}/recovery-kit`);
    await expect.poll(() => page.getByTestId("recovery-kit-download").isVisible()).toBe(true);
    expect(await overflow(page)).toEqual([]);
    await page.context().close();
  }, 60_000);
});

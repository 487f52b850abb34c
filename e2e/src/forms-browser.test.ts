/**
 * Forms in headless Chromium against the built server, at 1280 and 390 px (issue 35.7): the
 * password rules are on the first-admin and users pages before anyone fails them; a refused form
 * shows its message at the input (aria-invalid, described by the message) and a summary that
 * stays, not a toast that vanishes; the enrol form refused for a relative path keeps every typed
 * value, the repository password too; a save says "Saved" next to its form. The approve step of
 * an announced host offers the token's default schedule and retention, refuses a bad cron at its
 * input with every typed value kept, and creates the scheduled group. A plain (non-htmx) form
 * says "Saved" on the page its save redirects to, and nothing on its refused page.
 */
import { generateKeyPairSync } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { missingNote } from "./support/tools.js";

const PASSWORD = "browser keeper passphrase";
const WIDTHS = [1280, 390] as const;

const missing = missingNote({ Chromium: chromiumPath !== undefined });
describe.skipIf(missing !== "")(`forms say what is wrong at the field${missing}`, () => {
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startServerProcess({ FLEETBACK_LOG_LEVEL: "warn" });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const link = /(http\S+\/bootstrap\?token=\S+)/.exec(server.output())?.[1] ?? "";
    await page.goto(link);
    // The rules the server checks, before the first try.
    const rules = page.getByTestId("password-rules");
    expect(await rules.isVisible()).toBe(true);
    expect(await rules.textContent()).toContain("Must not contain the username");
    await page.getByTestId("username").fill("admin");
    await page.getByTestId("password").fill(PASSWORD);
    await page.getByTestId("submit").click();
    await page.waitForURL(`${server.url}/`);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function noSidewaysScroll(): Promise<void> {
    const widths = await page.locator("html").evaluate((root) => ({
      scroll: root.scrollWidth,
      client: root.clientWidth,
    }));
    expect(widths.scroll, JSON.stringify(widths)).toBeLessThanOrEqual(widths.client);
  }

  for (const width of WIDTHS) {
    it(`keeps the enrol form's input and marks the relative path, at ${width} px`, async () => {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${server.url}/enroll`);
      const form = page.getByTestId("mint-form");
      await form
        .locator('input[name="repository_url"]')
        .fill(`rest:https://backup.example.org:8000/w${width}/`);
      await form.locator('input[name="repository_username"]').fill(`w${width}`);
      await form.locator('input[name="repository_password"]').fill("typed repository secret");
      await form.locator('textarea[name="initial_paths"]').fill("/etc\nsrv/data");
      await page.getByTestId("mint").click();
      const message = page.getByTestId("field-error-initial_paths");
      await message.waitFor();
      expect(await message.textContent()).toBe('"srv/data" is not an absolute path');
      const paths = form.locator('textarea[name="initial_paths"]');
      expect(await paths.getAttribute("aria-invalid")).toBe("true");
      expect(await paths.getAttribute("aria-describedby")).toBe(await message.getAttribute("id"));
      expect(await paths.inputValue()).toBe("/etc\nsrv/data");
      expect(await form.locator('input[name="repository_password"]').inputValue()).toBe(
        "typed repository secret",
      );
      expect(await form.locator('input[name="repository_username"]').inputValue()).toBe(`w${width}`);
      expect(await page.getByTestId("form-error-summary").isVisible()).toBe(true);
      await noSidewaysScroll();

      await paths.fill("/etc\n/srv/data");
      await page.getByTestId("mint").click();
      await page.getByTestId("minted").waitFor();

      // An error no field owns is a toast, and it stays until dismissed: the token is revoked
      // behind this page's back first, so its Revoke is refused.
      const row = page.getByTestId("enrolment-token-row").first();
      const tokenId = (await row.getAttribute("data-token-id")) ?? "";
      const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
      const revoked = await page.evaluate(
        async ([id, token]) => {
          const body = new URLSearchParams({ _csrf: token ?? "" });
          const res = await fetch(`/enroll/tokens/${id}/revoke`, {
            method: "POST",
            body,
            redirect: "manual",
          });
          return res.type;
        },
        [tokenId, csrf],
      );
      expect(revoked).toBe("opaqueredirect");
      await row.getByTestId("revoke-enrolment-token").click();
      const toast = page.getByTestId("toast");
      await toast.waitFor();
      expect(await toast.getAttribute("class")).toBe("toast error");
      await toast.getByTestId("toast-dismiss").click();
      expect(await page.getByTestId("toast").count()).toBe(0);
    });

    it(`shows the password rules up front and the refusal at the field, then Saved, at ${width} px`, async () => {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${server.url}/settings/users`);
      const form = page.getByTestId("user-form");
      const rules = form.getByTestId("password-rules");
      expect(await rules.isVisible()).toBe(true);
      expect(await rules.textContent()).toContain("Must not contain the username");
      const name = `alice${width}`;
      await form.locator('input[name="username"]').fill(name);
      await form.locator('input[name="password"]').fill(`${name}-long-enough`);
      await form.getByRole("button", { name: "Add user" }).click();
      const message = form.getByTestId("field-error-password");
      await message.waitFor();
      expect(await message.textContent()).toBe("must not contain the username");
      const input = form.locator('input[name="password"]');
      expect(await input.getAttribute("aria-invalid")).toBe("true");
      expect((await input.getAttribute("aria-describedby"))?.split(" ")).toContain(
        await message.getAttribute("id"),
      );
      expect(await form.getByTestId("form-error-summary").textContent()).toContain(
        "must not contain the username",
      );
      // The message is at the field, not in a toast that goes by itself.
      expect(await page.getByTestId("toast").count()).toBe(0);
      await noSidewaysScroll();

      await input.fill("a different passphrase");
      await form.getByRole("button", { name: "Add user" }).click();
      const saved = page.getByTestId("saved");
      await saved.filter({ hasText: "Saved" }).waitFor();
      expect(await saved.getAttribute("role")).toBe("status");
      expect(await page.getByTestId("user-row").filter({ hasText: name }).count()).toBe(1);
      // A fresh page, not the refused one: nothing is marked invalid any more.
      expect(await page.locator("[aria-invalid=true]").count()).toBe(0);
      await noSidewaysScroll();

      // A conflict that names its field is shown there too: the name is taken now.
      await form.locator('input[name="username"]').fill(name);
      await form.locator('input[name="password"]').fill("yet another passphrase");
      await form.getByRole("button", { name: "Add user" }).click();
      const taken = form.getByTestId("field-error-username");
      await taken.waitFor();
      expect(await taken.textContent()).toBe(`"${name}" is already taken`);
      expect(await form.locator('input[name="username"]').getAttribute("aria-invalid")).toBe("true");
    });

    it(`approves an announced host with its first group scheduled, a bad cron refused at the field, at ${width} px`, async () => {
      await page.setViewportSize({ width, height: 900 });
      const hostname = `announced-${width}`;
      await announce(hostname);
      await page.goto(`${server.url}/enroll`);
      await page.getByTestId("pending-row").filter({ hasText: hostname }).getByTestId("approve").click();
      await page.getByTestId("approve-form").waitFor();
      // The token form's default, stated and editable; "No schedule" is a box to tick.
      expect(await page.getByTestId("initial-cron").inputValue()).toMatch(/^\d{1,2} [1-4] \* \* \*$/);
      expect(await page.getByTestId("keep-daily").inputValue()).toBe("7");
      expect(await page.getByTestId("keep-weekly").inputValue()).toBe("4");
      expect(await page.getByTestId("keep-monthly").inputValue()).toBe("6");
      expect(await page.getByTestId("no-schedule").isChecked()).toBe(false);
      await noSidewaysScroll();

      await page.getByTestId("approve-paths").fill("/etc\n/srv");
      await page.getByTestId("initial-cron").fill("every night");
      await page.getByTestId("keep-daily").fill("10");
      await page.getByTestId("approve-confirm").click();
      const message = page.getByTestId("field-error-initial_cron");
      await message.waitFor();
      expect(await page.getByTestId("initial-cron").getAttribute("aria-invalid")).toBe("true");
      expect(await page.getByTestId("initial-cron").inputValue()).toBe("every night");
      expect(await page.getByTestId("approve-paths").inputValue()).toBe("/etc\n/srv");
      expect(await page.getByTestId("keep-daily").inputValue()).toBe("10");
      expect(await page.getByTestId("form-error-summary").isVisible()).toBe(true);
      await noSidewaysScroll();

      await page.getByTestId("initial-cron").fill("15 2 * * *");
      await page.getByTestId("approve-confirm").click();
      await page.waitForURL(`${server.url}/enroll`);
      const hosts = (await (await page.request.get(`${server.url}/api/hosts`)).json()) as {
        hosts: Array<{ id: string; name: string }>;
      };
      const hostId = hosts.hosts.find((host) => host.name === hostname)?.id ?? "";
      const groups = (await (
        await page.request.get(`${server.url}/api/hosts/${hostId}/source-groups`)
      ).json()) as {
        source_groups: Array<{ id: string; name: string; includes: string[]; retention_policy: unknown }>;
      };
      expect(groups.source_groups).toEqual([
        expect.objectContaining({
          name: "default",
          includes: ["/etc", "/srv"],
          retention_policy: { daily: 10, weekly: 4, monthly: 6 },
        }),
      ]);
      const schedules = (await (
        await page.request.get(`${server.url}/api/hosts/${hostId}/schedules`)
      ).json()) as {
        schedules: Array<{ cron: string; source_group_ids: string[] }>;
      };
      expect(schedules.schedules.map((s) => [s.cron, s.source_group_ids])).toEqual([
        ["15 2 * * *", [groups.source_groups[0]?.id]],
      ]);
    });

    it(`says Saved after a plain form's save, never after its refusal, at ${width} px`, async () => {
      await page.setViewportSize({ width, height: 900 });
      const hosts = (await (await page.request.get(`${server.url}/api/hosts`)).json()) as {
        hosts: Array<{ id: string; name: string }>;
      };
      const hostId = hosts.hosts.find((host) => host.name === `announced-${width}`)?.id ?? "";
      expect(hostId).not.toBe("");
      await page.goto(`${server.url}/hosts/${hostId}`);
      // The labels form posts without htmx: the answer is a whole page (a redirect, or the page
      // again with the refusal marked), and "load" is after app.js has run on it.
      const form = page.getByTestId("labels-form");
      await form.getByTestId("labels-input").fill("env=pr od");
      await form.getByTestId("labels-submit").click();
      await page.waitForURL(`${server.url}/hosts/${hostId}/labels`, { waitUntil: "load" });
      const input = form.getByTestId("labels-input");
      expect(await input.getAttribute("aria-invalid")).toBe("true");
      expect(await form.getByTestId("field-error-labels").isVisible()).toBe(true);
      expect(await input.inputValue()).toBe("env=pr od");
      expect(await page.getByTestId("saved").count()).toBe(0);
      await noSidewaysScroll();

      await input.fill("env=prod");
      await form.getByTestId("labels-submit").click();
      await page.waitForURL(`${server.url}/hosts/${hostId}`, { waitUntil: "load" });
      const saved = page.locator('[data-testid="labels-form"] + [data-testid="saved"]');
      await saved.filter({ hasText: "Saved" }).waitFor();
      expect(await saved.getAttribute("role")).toBe("status");
      expect(await saved.isVisible()).toBe(true);
      expect(await page.getByTestId("saved").count()).toBe(1);
      expect(await page.locator("[aria-invalid=true]").count()).toBe(0);
      expect(await page.getByTestId("host-labels").textContent()).toContain("env");
      await noSidewaysScroll();

      // Only the page that follows the save says it: coming back later says nothing.
      await page.reload({ waitUntil: "load" });
      expect(await page.getByTestId("saved").count()).toBe(0);
    });
  }

  /** A host that ran install.sh without a token: it waits on the enrol page for approval. */
  async function announce(hostname: string): Promise<void> {
    const key = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" }).x ?? "";
    const res = await fetch(`${server.url}/api/agents/announce`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        hostname,
        os: "linux",
        arch: "x64",
        agent_version: "0.1.0",
        tool_version: "0.18.0",
        public_key: Buffer.from(key, "base64url").toString("base64"),
      }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
  }
});

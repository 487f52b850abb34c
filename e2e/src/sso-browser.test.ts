/**
 * Issue 18.1 and 18.2 against the built server: single sign-on through a real OpenID provider
 * process in headless Chromium at 1280 and 390 px (sign-in page, the provider's login and
 * consent, back on the page asked for with the role the groups map to), and the API's
 * OpenAPI document served by the real server, valid OpenAPI 3.1, browsable at /api/docs under the
 * CSP with no error in the browser's console. The client secret, read from a file, appears on no
 * surface.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Api, bootstrapAdmin } from "./support/api.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { type OidcProvider, startOidcProvider } from "./support/oidc-provider.js";
import { freePort } from "./support/ports.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { missingNote } from "./support/tools.js";

const CLIENT_ID = "fleetback-e2e";
const CLIENT_SECRET = "sso-client-secret-canary-9c2e4a71";

const missing = missingNote({ Chromium: chromiumPath !== undefined });
describe.skipIf(missing !== "")(`single sign-on and the API document in a real browser${missing}`, () => {
  let provider: OidcProvider;
  let server: ServerProcess;
  let api: Api;
  let browser: Browser;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "fleetback-e2e-sso-"));
    const port = await freePort();
    const serverUrl = `http://127.0.0.1:${port}`;
    provider = await startOidcProvider({
      redirectUri: `${serverUrl}/auth/sso/callback`,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      accounts: {
        olivia: { preferred_username: "olivia", email: "olivia@example.com", groups: ["staff", "fleet-ops"] },
        victor: { preferred_username: "victor", groups: ["staff"] },
      },
    });
    const secretFile = join(dir, "oidc-client-secret");
    await writeFile(secretFile, `${CLIENT_SECRET}\n`, { mode: 0o600 });
    server = await startServerProcess({
      FLEETBACK_LISTEN: `127.0.0.1:${port}`,
      FLEETBACK_BASE_URL: serverUrl,
      FLEETBACK_LOG_LEVEL: "debug",
      FLEETBACK_OIDC_ISSUER: provider.issuer,
      FLEETBACK_OIDC_CLIENT_ID: CLIENT_ID,
      FLEETBACK_OIDC_CLIENT_SECRET_FILE: secretFile,
      FLEETBACK_OIDC_SCOPES: "openid profile email groups",
      FLEETBACK_OIDC_ROLE_CLAIM: "groups",
      FLEETBACK_OIDC_ROLE_MAP: "fleet-admins=admin,fleet-ops=operator",
      // No access is the default since issue 34; victor (staff only) comes in as a viewer by choice.
      FLEETBACK_OIDC_DEFAULT_ROLE: "viewer",
      FLEETBACK_OIDC_NAME: "Example SSO",
    });
    api = await bootstrapAdmin(server.url, server.output());
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await provider?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ["olivia", 1280, "operator"],
    ["victor", 390, "viewer"],
  ] as const)(
    "signs %s in through the provider at %i px, landing on the fleet page as %s",
    async (login, width, role) => {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on("console", (message) => {
        // The provider's development page asks Google for a font; this machine reaches no network.
        if (message.type() === "error" && page.url().startsWith(server.url)) {
          problems.push(message.text());
        }
      });
      await page.goto(`${server.url}/hosts`);
      await page.waitForURL(/\/login\?next=%2Fhosts$/);
      await page.getByTestId("sso-sign-in").click();
      await page.waitForURL((url) => url.href.startsWith(provider.issuer));
      await page.locator('input[name="login"]').fill(login);
      await page.locator('input[name="password"]').fill("whatever the provider checks");
      await page.locator('button[type="submit"]').click();
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(`${server.url}/hosts`);
      await expect(page.getByTestId("logout").textContent()).resolves.toContain(login);
      const me = (await page.evaluate(async () => (await fetch("/api/auth/me")).json())) as { user: unknown };
      expect(me.user).toMatchObject({ username: login, role });
      const users = await api.get<{ users: Array<{ username: string; role: string; sso: boolean }> }>(
        "/api/users",
      );
      expect(users.users.find((u) => u.username === login)).toMatchObject({ role, sso: true });
      expect(problems).toEqual([]);
      await context.close();
    },
  );

  it("serves a valid OpenAPI 3.1 document whose every read without parameters answers, and shows it at /api/docs", async () => {
    const document = await api.get<{
      openapi: string;
      paths: Record<string, Record<string, { parameters?: Array<{ required?: boolean }> } | undefined>>;
    }>("/api/openapi.json");
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toMatch(/^3\.1\./);
    const METHODS = ["get", "post", "put", "patch", "delete"];
    const operations = Object.values(document.paths).reduce(
      (n, item) => n + Object.keys(item).filter((key) => METHODS.includes(key)).length,
      0,
    );
    expect(operations).toBeGreaterThan(60);
    // Every documented read that needs no id and no required parameter (search needs its text)
    // is a route the real server answers.
    for (const [path, item] of Object.entries(document.paths)) {
      const needsInput = item.get?.parameters?.some((parameter) => parameter.required) ?? false;
      if (item.get && !needsInput && !path.includes("{") && !path.startsWith("/api/agents/")) {
        const res = await fetch(`${server.url}${path}`, {
          headers: { Authorization: `Bearer ${api.token}`, Connection: "close" },
        });
        api.seen.push(await res.text());
        expect(res.status, `GET ${path}`).toBe(200);
      }
    }

    const context = await browser.newContext({ viewport: { width: 390, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") {
        problems.push(message.text());
      }
    });
    await page.goto(`${server.url}/login`);
    await page.getByLabel("Username").fill("admin");
    await page.getByLabel("Password").fill("e2e operator passphrase");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(`${server.url}/`);
    const answer = await page.goto(`${server.url}/api/docs`);
    expect(answer?.headers()["content-security-policy"]).toContain("script-src 'self'");
    await expect(page.getByTestId("operation").count()).resolves.toBe(operations);
    await page.getByTestId("operation").first().locator("summary").click();
    await expect(page.getByTestId("operation").first().getAttribute("open")).resolves.toBe("");
    expect(problems).toEqual([]);
    await context.close();
  });

  it("shows the client secret nowhere: not in the server's output, pages or API answers", async () => {
    await api.text("/login");
    await api.text("/settings/users");
    expect(server.output()).not.toContain(CLIENT_SECRET);
    expect(api.seen.join("\n")).not.toContain(CLIENT_SECRET);
  });
});

/**
 * API tokens may carry an expiry (API and tokens page): past it the token is refused with 401
 * like a revoked one, and the list shows when it expires and that it has. A plain http:// base
 * URL off loopback is warned about on the enrol page and once at start-up.
 */

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatIso } from "@fleetback/web";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plainHttpWarning } from "../http/plain-http.js";
import { createLogger } from "../log.js";
import { startServer } from "../server.js";
import { createTestClient, csrfFrom } from "../testing/http.js";
import { type SignedInApp, startSignedInApp, TEST_PASSWORD } from "../testing/signed-in-app.js";
import { type TestDeps, testConfig } from "../testing/test-deps.js";

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

let signed: SignedInApp;
let deps: TestDeps;
beforeAll(async () => {
  signed = await startSignedInApp({ adminName: "root-admin" });
  deps = signed.deps;
});
afterAll(async () => {
  await deps.close();
});

/** A session per test: the shared clock only moves on, and a test's session must outlast its own moves. */
function signedIn() {
  return signed.login("root-admin");
}

function me(app: SignedInApp["app"], token: string) {
  return app.request("/api/auth/me", { headers: { Authorization: `Bearer ${token}` } });
}

describe("API token expiry", () => {
  it("refuses an expiry that is malformed or past, naming expires_at", async () => {
    const client = await signedIn();
    for (const expires_at of ["tomorrow", "2027-01-01T00:00:00", "2026-13-45", "2027-02-30", "2020-01-01"]) {
      const res = await client.json("POST", "/api/api-tokens", { name: "bad", expires_at });
      expect([expires_at, res.status]).toEqual([expires_at, 400]);
      expect(((await res.json()) as { message: string }).message).toMatch(/^expires_at: /);
    }
  });

  it("accepts a token until it expires, then answers 401; the list says so", async () => {
    const { app } = signed;
    const client = await signedIn();
    // An hour, so the session that lists the tokens afterwards is still valid.
    const expiresAt = new Date(deps.clock.now().getTime() + HOUR).toISOString();
    const created = await client.json("POST", "/api/api-tokens", { name: "short", expires_at: expiresAt });
    expect(created.status).toBe(201);
    const body = (await created.json()) as { token: string; api_token: { id: string; expires_at: string } };
    expect(body.api_token.expires_at).toBe(expiresAt);
    const forever = (await (await client.json("POST", "/api/api-tokens", { name: "forever" })).json()) as {
      token: string;
    };

    expect((await me(app, body.token)).status).toBe(200);
    deps.clock.advance(HOUR);
    const refused = await me(app, body.token);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { message: string }).message).toContain("expired");
    expect((await me(app, forever.token)).status).toBe(200);

    const list = (await (await client.request("/api/api-tokens")).json()) as {
      api_tokens: { id: string; expires_at: string | null; expired: boolean }[];
    };
    const row = list.api_tokens.find((token) => token.id === body.api_token.id);
    expect(row).toMatchObject({ expires_at: expiresAt, expired: true });
    expect(list.api_tokens.find((token) => token.id !== body.api_token.id)).toMatchObject({
      expires_at: null,
      expired: false,
    });
    const page = await (await client.request("/settings/tokens")).text();
    expect(page).toMatch(
      new RegExp(`<time datetime="${formatIso(expiresAt)}"[^>]*>[^<]+</time> <strong>\\(expired\\)</strong>`),
    );
  });

  it("the tokens page creates a token that expires at the end of the chosen day (UTC)", async () => {
    const client = await signedIn();
    const csrf = csrfFrom(await (await client.request("/settings/tokens")).text());
    const day = new Date(deps.clock.now().getTime() + 3 * DAY).toISOString().slice(0, 10);
    const res = await client.form("/settings/tokens", { _csrf: csrf, name: "dated", expires_at: day });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(`${day}T23:59:59.999Z`);
    const blank = await client.form("/settings/tokens", { _csrf: csrf, name: "undated", expires_at: "" });
    expect(blank.status).toBe(200);
    const zoned = await client.json("POST", "/api/api-tokens", {
      name: "zoned",
      expires_at: "2027-01-01T01:00:00+02:00",
    });
    expect(((await zoned.json()) as { api_token: { expires_at: string } }).api_token.expires_at).toBe(
      "2026-12-31T23:00:00.000Z",
    );
  });
});

describe("plain http:// base URL", () => {
  it("is flagged off loopback only", () => {
    for (const url of ["http://fleet.example:8080", "http://10.0.0.5"]) {
      expect(plainHttpWarning(url), url).toContain("plain http://");
    }
    for (const url of [
      "https://fleet.example",
      "http://127.0.0.1:8080",
      "http://localhost:8080",
      "http://[::1]:8080",
    ]) {
      expect(plainHttpWarning(url), url).toBeUndefined();
    }
  });

  it("shows a warning on the enrol page, and none on loopback", async () => {
    const { app } = signed;
    const client = await signedIn();
    expect(await (await client.request("/enroll")).text()).not.toContain("plain-http-warning");
    const previous = deps.config.baseUrl;
    deps.config.baseUrl = "http://fleet.example:8080";
    try {
      const origin = { Origin: "http://fleet.example:8080" };
      const remote = createTestClient(app, deps.config.baseUrl);
      await remote.json(
        "POST",
        "/api/auth/login",
        { username: "root-admin", password: TEST_PASSWORD },
        origin,
      );
      const page = await (await remote.request("/enroll")).text();
      expect(page).toContain('data-testid="plain-http-warning"');
      expect(page).toContain("sudo bash");
    } finally {
      deps.config.baseUrl = previous;
    }
  });

  it("logs one warning at start-up", async () => {
    const root = await mkdtemp(join(tmpdir(), "fleetback-plain-http-"));
    const lines: string[] = [];
    const log = createLogger("info", { write: (line: string) => lines.push(line) });
    const server = await startServer(
      testConfig({
        dataDir: join(root, "data"),
        listen: { host: "127.0.0.1", port: 0 },
        baseUrl: "http://fleet.example:8080",
      }),
      { log },
    );
    await server.close();
    await rm(root, { recursive: true, force: true });
    expect(lines.filter((line) => line.includes("plain http://"))).toHaveLength(1);
  }, 120_000);
});

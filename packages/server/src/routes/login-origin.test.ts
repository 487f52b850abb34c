/**
 * Sign-in cannot be turned against the user: `next` never leaves our origin however it is
 * encoded, and an unsafe request with `Origin: null` (a sandboxed frame) is refused before it
 * can sign the victim into someone else's account.
 */
import { describe, expect, it } from "vitest";
import { safeNext } from "../http/safe-next.js";
import { createTestClient } from "../testing/http.js";
import { freshDepsPerTest, postLoginForm, TEST_PASSWORD } from "../testing/signed-in-app.js";

/** Where a browser on our page would end up after following `location`. */
function followedTo(location: string, base: string): string {
  return new URL(location, base).origin;
}

const HOSTILE = [
  "/\t/evil.example",
  "/%09/evil.example",
  "/\n/evil.example",
  "/\\evil.example",
  "/\\/evil.example",
  "//evil.example",
  "/.//evil.example",
  "/%2e//evil.example",
  "https://evil.example/",
  "javascript:alert(1)",
  " /\\evil.example",
];

describe("safeNext", () => {
  it("follows a same-origin path with its query", () => {
    const base = "https://fleet.example";
    expect(safeNext("/hosts/01J?tab=jobs", base)).toBe("/hosts/01J?tab=jobs");
    expect(safeNext(undefined, base)).toBe("/");
  });

  it.each(HOSTILE)("never leaves the origin for %j", (next) => {
    const base = "https://fleet.example";
    const location = safeNext(next, base);
    expect(followedTo(location, base)).toBe(base);
    expect(location).toMatch(/^\/(?![/\\])/);
  });
});

describe("sign-in next", () => {
  const fresh = freshDepsPerTest();

  it("the login form with next=/%09/evil.example (decoded by the query) redirects home", async () => {
    const { app } = await fresh.withAdmin();
    const page = await createTestClient(app, fresh.deps.config.baseUrl).request(
      "/login?next=/%09/evil.example",
    );
    expect(await page.text()).not.toContain("evil.example");
    const browser = createTestClient(app, fresh.deps.config.baseUrl);
    const res = await postLoginForm(browser, "root-admin", "/\t/evil.example");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/");
  });
});

describe("Origin: null", () => {
  const fresh = freshDepsPerTest();

  it("refuses a login form posted from a sandboxed frame, and sets no session", async () => {
    const { app } = await fresh.withAdmin();
    const victim = createTestClient(app, fresh.deps.config.baseUrl);
    const res = await victim.form(
      "/login",
      { username: "root-admin", password: TEST_PASSWORD },
      { Origin: "null" },
    );
    expect(res.status).toBe(403);
    expect(victim.cookie).toBeUndefined();
    const api = await victim.json(
      "POST",
      "/api/auth/login",
      { username: "root-admin", password: TEST_PASSWORD },
      { Origin: "null" },
    );
    expect(api.status).toBe(403);
    expect(victim.cookie).toBeUndefined();
  });

  it("still accepts our own origin, and API-token calls without any Origin", async () => {
    const { app, client } = await fresh.withAdmin();
    const browser = createTestClient(app, fresh.deps.config.baseUrl);
    const res = await postLoginForm(browser, "root-admin");
    expect(res.status).toBe(303);
    const created = await client.json("POST", "/api/api-tokens", { name: "script" });
    const { token } = (await created.json()) as { token: string };
    const scripted = await app.request("/api/users", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ username: "viewer1", password: TEST_PASSWORD, role: "viewer" }),
    });
    expect(scripted.status).toBe(201);
  });
});

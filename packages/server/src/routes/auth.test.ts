import { sessions } from "@fleetback/db";
import { describe, expect, it } from "vitest";
import { createApp } from "../app.js";
import { createTestClient, csrfFrom } from "../testing/http.js";
import { BOOTSTRAP_TOKEN, freshDepsPerTest, postLoginForm, TEST_PASSWORD } from "../testing/signed-in-app.js";

const fresh = freshDepsPerTest();

describe("bootstrap", () => {
  it("refuses a wrong token, creates one admin with the right one, then is burned", async () => {
    const app = createApp(fresh.deps);
    const client = createTestClient(app, fresh.deps.config.baseUrl);
    const wrong = await client.json("POST", "/api/auth/bootstrap", {
      bootstrap_token: "nope",
      username: "a",
      password: TEST_PASSWORD,
    });
    expect(wrong.status).toBe(401);
    const ok = await client.json("POST", "/api/auth/bootstrap", {
      bootstrap_token: BOOTSTRAP_TOKEN,
      username: "first",
      password: TEST_PASSWORD,
    });
    expect(ok.status).toBe(201);
    expect(await ok.json()).toMatchObject({ user: { username: "first", role: "admin" } });
    expect(client.cookie).toMatch(/^fleetback_session=fbs_/);
    const again = await client.json("POST", "/api/auth/bootstrap", {
      bootstrap_token: BOOTSTRAP_TOKEN,
      username: "second",
      password: TEST_PASSWORD,
    });
    expect(again.status).toBe(401);
    expect((await client.request("/bootstrap")).status).toBe(303);
  });

  it("lets exactly one of two racing bootstraps win", async () => {
    const app = createApp(fresh.deps);
    const a = createTestClient(app, fresh.deps.config.baseUrl);
    const b = createTestClient(app, fresh.deps.config.baseUrl);
    const results = await Promise.all([
      a.json("POST", "/api/auth/bootstrap", {
        bootstrap_token: BOOTSTRAP_TOKEN,
        username: "alpha",
        password: TEST_PASSWORD,
      }),
      b.json("POST", "/api/auth/bootstrap", {
        bootstrap_token: BOOTSTRAP_TOKEN,
        username: "bravo",
        password: TEST_PASSWORD,
      }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
  });

  it("names the field of a weak password", async () => {
    const client = createTestClient(createApp(fresh.deps), fresh.deps.config.baseUrl);
    const res = await client.json("POST", "/api/auth/bootstrap", {
      bootstrap_token: BOOTSTRAP_TOKEN,
      username: "x",
      password: "short",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: "invalid",
      message: expect.stringMatching(/^password: /),
    });
  });
});

describe("login and sessions", () => {
  it("answers a wrong password and an unknown user the same way", async () => {
    const { app } = await fresh.withAdmin();
    const client = createTestClient(app, fresh.deps.config.baseUrl);
    const wrongPassword = await client.json("POST", "/api/auth/login", {
      username: "root-admin",
      password: "wrong password!",
    });
    const unknownUser = await client.json("POST", "/api/auth/login", {
      username: "ghost",
      password: "wrong password!",
    });
    expect(wrongPassword.status).toBe(401);
    expect(unknownUser.status).toBe(401);
    const message = async (res: Response) => ((await res.json()) as { message: string }).message;
    expect(await message(wrongPassword)).toBe(await message(unknownUser));
  });

  it("stores only the hash of the session token and ends idle sessions after 12 h", async () => {
    const { client } = await fresh.withAdmin();
    const token = decodeURIComponent((client.cookie ?? "").split("=")[1] ?? "");
    const rows = await fresh.deps.db.select().from(sessions);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect((await client.request("/api/auth/me")).status).toBe(200);
    fresh.deps.clock.advance(12 * 60 * 60 * 1000 + 1000);
    expect((await client.request("/api/auth/me")).status).toBe(401);
  });

  it("rate-limits repeated failures per username with Retry-After", async () => {
    const { app } = await fresh.withAdmin();
    const client = createTestClient(app, fresh.deps.config.baseUrl);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await client.json("POST", "/api/auth/login", {
        username: "root-admin",
        password: `wrong-${i}`,
      });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      }
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
  });

  it("signs in through the login form and follows only same-site next paths", async () => {
    const { app } = await fresh.withAdmin();
    const browser = createTestClient(app, fresh.deps.config.baseUrl);
    const res = await postLoginForm(browser, "root-admin", "//evil.example/x");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/");
    const page = await browser.request("/");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Sign out root-admin");
  });
});

describe("CSRF and origin", () => {
  it("accepts a session JSON call only with our Origin", async () => {
    const { client } = await fresh.withAdmin();
    const body = { username: "viewer1", password: TEST_PASSWORD, role: "viewer" };
    const noOrigin = await client.request("/api/users", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(noOrigin.status).toBe(403);
    const foreign = await client.json("POST", "/api/users", body, { Origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect((await client.json("POST", "/api/users", body)).status).toBe(201);
  });

  it("accepts a session form post only with the session's CSRF token", async () => {
    const { client } = await fresh.withAdmin();
    const fields = { username: "op1", password: TEST_PASSWORD, role: "operator" };
    expect((await client.form("/settings/users", fields)).status).toBe(403);
    expect((await client.form("/settings/users", { ...fields, _csrf: "forged" })).status).toBe(403);
    const csrf = csrfFrom(await (await client.request("/settings/users")).text());
    expect((await client.form("/settings/users", { ...fields, _csrf: csrf })).status).toBe(303);
    const htmx = await client.form(
      "/settings/users",
      { ...fields, username: "op2" },
      { "X-CSRF-Token": csrf, "HX-Request": "true" },
    );
    expect(htmx.status).toBe(204);
    expect(htmx.headers.get("hx-redirect")).toBe("/settings/users");
  });

  it("shows a duplicate username as a toast for htmx posts", async () => {
    const { client } = await fresh.withAdmin();
    const csrf = csrfFrom(await (await client.request("/settings/users")).text());
    const res = await client.form(
      "/settings/users",
      { username: "root-admin", password: TEST_PASSWORD, role: "viewer" },
      { "X-CSRF-Token": csrf, "HX-Request": "true" },
    );
    expect(res.status).toBe(409);
    expect(await res.text()).toBe('username: "root-admin" is already taken');
  });
});

describe("API tokens", () => {
  it("work without CSRF, act with the user's role, and stop working when revoked", async () => {
    const { app, client } = await fresh.withAdmin();
    const created = await client.json("POST", "/api/api-tokens", { name: "script" });
    expect(created.status).toBe(201);
    const { token, api_token } = (await created.json()) as { token: string; api_token: { id: string } };
    expect(token).toMatch(/^fbu_/);
    const script = createTestClient(app, fresh.deps.config.baseUrl);
    const auth = { Authorization: `Bearer ${token}` };
    expect((await script.request("/api/users", { headers: auth })).status).toBe(200);
    const listed = await (await client.request("/api/api-tokens")).text();
    expect(listed).not.toContain(token);
    expect((await client.json("DELETE", `/api/api-tokens/${api_token.id}`)).status).toBe(204);
    expect((await script.request("/api/users", { headers: auth })).status).toBe(401);
  });
});

describe("users", () => {
  it("never leaves the service without an enabled admin", async () => {
    const { client } = await fresh.withAdmin();
    const me = (await (await client.request("/api/auth/me")).json()) as { user: { id: string } };
    const demote = await client.json("PUT", `/api/users/${me.user.id}`, { role: "viewer" });
    expect(demote.status).toBe(409);
    const remove = await client.json("DELETE", `/api/users/${me.user.id}`);
    expect(remove.status).toBe(409);
  });

  it("ends a demoted user's sessions at once", async () => {
    const { app, client } = await fresh.withAdmin();
    const created = await client.json("POST", "/api/users", {
      username: "op",
      password: TEST_PASSWORD,
      role: "operator",
    });
    const { user } = (await created.json()) as { user: { id: string } };
    const op = createTestClient(app, fresh.deps.config.baseUrl);
    expect(
      (await op.json("POST", "/api/auth/login", { username: "op", password: TEST_PASSWORD })).status,
    ).toBe(200);
    expect((await op.request("/api/auth/me")).status).toBe(200);
    expect((await client.json("PUT", `/api/users/${user.id}`, { role: "viewer" })).status).toBe(200);
    expect((await op.request("/api/auth/me")).status).toBe(401);
  });
});

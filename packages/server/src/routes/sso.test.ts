/**
 * Single sign-on (issue 18.1) against a real OpenID provider process (oidc-provider): the code
 * flow with PKCE, state and nonce; users created on first sign-in with the role their groups map
 * to, re-mapped at each sign-in; a wrong state, an expired code, a replayed callback and a
 * disabled user refused; password sign-in off once an SSO admin exists; the client secret on no
 * surface.
 */
import { auditLog, users } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { updateUser } from "../auth/users.js";
import { createTestClient } from "../testing/http.js";
import {
  BASE_URL,
  CALLBACK,
  finish,
  me,
  ssoAppPerSuite,
  ssoRefused,
  ssoSignIn,
  userNamed,
} from "../testing/sso-harness.js";

const ACCOUNTS = {
  alice: { preferred_username: "alice", email: "alice@example.com", groups: ["fleet-admins", "staff"] },
  bob: { preferred_username: "bob", groups: ["fleet-ops"] },
  carol: { preferred_username: "carol", groups: ["staff"] },
  // Takes the name of the local admin: must get a user of its own, never that one.
  mallory: { preferred_username: "admin", groups: ["fleet-admins"] },
};

describe("single sign-on through a real OpenID provider", () => {
  const s = ssoAppPerSuite(ACCOUNTS, { FLEETBACK_OIDC_DEFAULT_ROLE: "viewer" });

  it("sends the browser to the provider with PKCE (S256), state and nonce", async () => {
    const res = await s.app.request("/auth/sso?next=/hosts");
    const url = new URL(res.headers.get("location") ?? "");
    expect(url.origin).toBe(s.provider.issuer);
    expect(url.searchParams.get("response_type")).toBe("code");
    expect(url.searchParams.get("redirect_uri")).toBe(CALLBACK);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(url.searchParams.get("nonce")).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(url.searchParams.get("scope")).toBe("openid profile email groups");
    const cookie = res.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    // Sealed: neither the state nor the verifier can be read from it.
    expect(cookie).not.toContain(url.searchParams.get("state") ?? "-");
  });

  it("creates the user on first sign-in with the mapped role and lands on `next`", async () => {
    const signed = await ssoSignIn(s, "alice", { next: "/hosts" });
    expect(signed.status).toBe(303);
    expect(signed.location).toBe("/hosts");
    expect(await me(s, signed.session)).toMatchObject({ username: "alice", role: "admin" });
    const row = await userNamed(s, "alice");
    expect(row).toMatchObject({
      role: "admin",
      passwordHash: null,
      ssoSubject: "alice",
      ssoIssuer: s.provider.issuer,
    });
    const listed = await s.app.request("/api/users", { headers: { Cookie: signed.session ?? "" } });
    const body = (await listed.json()) as { users: Array<{ username: string; sso: boolean }> };
    expect(body.users.find((u) => u.username === "alice")?.sso).toBe(true);
    expect(body.users.find((u) => u.username === "admin")?.sso).toBe(false);
    const audits = await s.deps.db.select().from(auditLog).where(eq(auditLog.action, "auth.sso_login"));
    expect(audits.length).toBeGreaterThan(0);
    // A second sign-in is the same user.
    const again = await ssoSignIn(s, "alice");
    expect(again.location).toBe("/");
    expect((await s.deps.db.select().from(users).where(eq(users.ssoSubject, "alice"))).length).toBe(1);
  });

  it("maps groups to roles (highest wins), else the default role (here viewer), and re-maps at each sign-in", async () => {
    const bob = await ssoSignIn(s, "bob");
    expect(await me(s, bob.session)).toMatchObject({ username: "bob", role: "operator" });
    const carol = await ssoSignIn(s, "carol");
    expect(await me(s, carol.session)).toMatchObject({ username: "carol", role: "viewer" });
    await s.provider.setAccounts({ ...ACCOUNTS, bob: { preferred_username: "bob", groups: ["staff"] } });
    const demoted = await ssoSignIn(s, "bob");
    expect(await me(s, demoted.session)).toMatchObject({ role: "viewer" });
    await s.provider.setAccounts(ACCOUNTS);
  });

  it("never hands an identity the local user of the same name", async () => {
    const signed = await ssoSignIn(s, "mallory");
    expect(await me(s, signed.session)).toMatchObject({ username: "admin-2", role: "admin" });
    expect((await userNamed(s, "admin"))?.ssoSubject).toBeNull();
  });

  it("refuses a wrong state, a callback without this browser's cookie, and a replayed code", async () => {
    const wrongState = await ssoSignIn(s, "alice", {
      tamper: (url) => {
        const copy = new URL(url);
        copy.searchParams.set("state", "not-the-state-this-browser-sent");
        return copy;
      },
    });
    expect(wrongState.status).toBe(401);
    expect(wrongState.session).toBeUndefined();
    expect(wrongState.text).toContain("state does not match");

    const good = await ssoSignIn(s, "carol");
    expect(good.status).toBe(303);
    const noCookie = await finish(s, good.callback, undefined);
    expect(noCookie.status).toBe(401);
    expect(noCookie.text).toContain("did not start a sign-in here");
    const replayed = await finish(s, good.callback, good.ssoCookie);
    expect(replayed.status).toBe(401);
    expect(replayed.text).toContain("invalid_grant");
    expect(replayed.session).toBeUndefined();
  });

  it("refuses a user disabled in Fleetback, whatever the provider says", async () => {
    const bob = await userNamed(s, "bob");
    const admin = await userNamed(s, "admin");
    if (!bob || !admin) {
      throw new Error("bob and admin exist by now");
    }
    await updateUser(
      s.deps,
      { actor: { userId: admin.id, username: "admin", role: "admin", via: "session" }, ip: undefined },
      bob.id,
      { disabled: true },
    );
    const refused = await ssoRefused(s, "bob", "disabled");
    expect(refused.session).toBeUndefined();
  });

  it("refuses a password for a single sign-on user", async () => {
    const admin = createTestClient(s.app, BASE_URL);
    await admin.json("POST", "/api/auth/login", { username: "admin", password: "correct horse battery" });
    const alice = await userNamed(s, "alice");
    const res = await admin.json("POST", `/api/users/${alice?.id}/password`, {
      password: "a brand new password",
    });
    expect(res.status).toBe(409);
    expect(await res.text()).toContain("single sign-on");
  });

  it("never shows the client secret", () => {
    expect(s.seen.join("\n")).not.toContain(s.provider.clientSecret);
    expect(s.provider.stderr()).not.toContain("provider error");
  });
});

describe("single sign-on: an expired code", () => {
  const s = ssoAppPerSuite(ACCOUNTS, {}, { codeTtlSeconds: 1 });

  it("is refused with the provider's invalid_grant, and no session", async () => {
    const expired = await ssoSignIn(s, "alice", { waitMs: 2_500 });
    expect(expired.status).toBe(401);
    expect(expired.text).toContain("invalid_grant");
    expect(expired.session).toBeUndefined();
    expect(await userNamed(s, "alice")).toBeUndefined();
  });
});

describe("single sign-on: password sign-in turned off", () => {
  const s = ssoAppPerSuite(ACCOUNTS, { FLEETBACK_LOCAL_LOGIN: "off" });

  it("stays on until an SSO admin exists, then refuses passwords; an unmapped identity gets no user", async () => {
    const login = () =>
      createTestClient(s.app, BASE_URL).json("POST", "/api/auth/login", {
        username: "admin",
        password: "correct horse battery",
      });
    expect((await login()).status).toBe(200);
    const page = await (await s.app.request("/login")).text();
    expect(page).toContain('data-testid="login-form"');
    expect(page).toContain('data-testid="sso-sign-in"');

    await ssoRefused(
      s,
      "carol",
      "No access to Fleetback: your account at the identity provider has no role here",
    );
    expect(await userNamed(s, "carol")).toBeUndefined();

    const alice = await ssoSignIn(s, "alice");
    expect(await me(s, alice.session)).toMatchObject({ role: "admin" });
    const refused = await login();
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("Password sign-in is turned off");
    const after = await (await s.app.request("/login")).text();
    expect(after).not.toContain('data-testid="login-form"');
    expect(after).toContain('data-testid="local-login-off"');
  });
});

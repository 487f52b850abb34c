/**
 * Who single sign-on lets in (issue 34), against the real OpenID provider process: no access by
 * default for an identity no mapping matches (a "no access" page and an audit entry), the email
 * domain and required claim limits, SSO sessions bounded by FLEETBACK_OIDC_SESSION_MAX, password
 * sessions ended once password sign-in is off, and a bad discovery document not held until restart.
 */
import { auditLog, users } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { DISCOVERY_RETRY_FIRST_MS } from "../auth/sso-discovery.js";
import { createTestClient } from "../testing/http.js";
import {
  BASE_URL,
  me,
  providerPerSuite,
  type Setup,
  setup,
  ssoRefused,
  ssoSignIn,
  userNamed,
} from "../testing/sso-harness.js";

const ACCOUNTS = {
  alice: { preferred_username: "alice", groups: ["fleet-admins"] },
  // Anyone a multi-tenant provider knows: no group Fleetback maps.
  stranger: { preferred_username: "stranger", email: "stranger@gmail.example", groups: [] },
  dave: { preferred_username: "dave", email: "dave@example.com", email_verified: true, groups: ["staff"] },
  eve: { preferred_username: "eve", email: "eve@example.com", email_verified: false, groups: ["staff"] },
  frank: {
    preferred_username: "frank",
    email: "frank@other.example",
    email_verified: true,
    groups: ["staff"],
  },
  gina: { preferred_username: "gina", groups: ["staff", "backup-admins"] },
};

async function refusals(s: Setup) {
  return s.deps.db.select().from(auditLog).where(eq(auditLog.action, "auth.sso_refused"));
}

describe("single sign-on access", () => {
  const op = providerPerSuite(ACCOUNTS);
  /** An app that lets in as a viewer anyone the provider vouches for, unless `rule` keeps them out. */
  const viewersUnless = (rule: Record<string, string>) =>
    setup(op.provider, { FLEETBACK_OIDC_DEFAULT_ROLE: "viewer", ...rule });

  it("gives an identity no mapping matches no access by default, on a page that says so, and audits it", async () => {
    const s = await setup(op.provider);
    const refused = await ssoSignIn(s, "stranger");
    expect(refused.status).toBe(403);
    expect(refused.session).toBeUndefined();
    expect(refused.text).toContain("No access to Fleetback");
    expect(refused.text).toContain('data-testid="error-page"');
    expect(await userNamed(s, "stranger")).toBeUndefined();
    const [entry, ...more] = await refusals(s);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({ actorKind: "system", ip: null });
    expect(entry?.details).toMatchObject({
      sso: true,
      issuer: op.provider.issuer,
      subject: "stranger",
      name: "stranger",
      reason: "your account at the identity provider has no role here",
    });
    // A mapped identity still gets in.
    const alice = await ssoSignIn(s, "alice");
    expect(await me(s, alice.session)).toMatchObject({ username: "alice", role: "admin" });
  });

  it("marks SSO users in the audit log, in the API and on the page", async () => {
    const s = await setup(op.provider);
    await ssoSignIn(s, "stranger");
    const alice = await ssoSignIn(s, "alice");
    const res = await s.app.request("/api/audit", { headers: { Cookie: alice.session ?? "" } });
    expect(res.status).toBe(200);
    const { entries } = (await res.json()) as { entries: Array<Record<string, unknown>> };
    const row = (action: string) => entries.find((entry) => entry.action === action);
    expect(row("auth.sso_login")).toMatchObject({ username: "alice", actor_sso: true, target_sso: true });
    expect(row("auth.bootstrap")).toMatchObject({ username: "admin", actor_sso: false, target_sso: false });
    expect(row("auth.sso_refused")).toMatchObject({
      actor_kind: "system",
      actor_sso: false,
      details: { sso: true, name: "stranger" },
    });
    const page = await (
      await s.app.request("/audit", { headers: { Cookie: alice.session ?? "", Accept: "text/html" } })
    ).text();
    const aliceRows = page.split("<tr>").filter((tr) => tr.includes("auth.sso_login"));
    expect(aliceRows.length).toBeGreaterThan(0);
    expect(aliceRows.every((tr) => tr.includes('data-testid="audit-actor-sso"'))).toBe(true);
    const adminRow = page.split("<tr>").find((tr) => tr.includes("auth.bootstrap")) ?? "";
    expect(adminRow).toContain("admin");
    expect(adminRow).not.toContain("audit-actor-sso");
    const refusedRow = page.split("<tr>").find((tr) => tr.includes("auth.sso_refused")) ?? "";
    expect(refusedRow).toMatch(/<strong>stranger<\/strong> <small[^>]*data-testid="audit-target-sso"/);
  });

  it("limits sign-on to verified addresses of FLEETBACK_OIDC_ALLOWED_DOMAINS", async () => {
    const s = await viewersUnless({ FLEETBACK_OIDC_ALLOWED_DOMAINS: "example.com" });
    const dave = await ssoSignIn(s, "dave");
    expect(await me(s, dave.session)).toMatchObject({ username: "dave", role: "viewer" });
    await ssoRefused(s, "eve", "no verified email address");
    await ssoRefused(s, "frank", "other.example may not sign in here");
    // Mapped to admin, but with no email at all: the domain rule comes before any role.
    const alice = await ssoSignIn(s, "alice");
    expect(alice.status).toBe(403);
    expect(await userNamed(s, "eve")).toBeUndefined();
    expect(await userNamed(s, "frank")).toBeUndefined();
    expect((await refusals(s)).map((row) => row.details.name)).toEqual(["eve", "frank", "alice"]);
  });

  it("limits sign-on to FLEETBACK_OIDC_REQUIRED_CLAIM, for existing users too", async () => {
    const s = await viewersUnless({ FLEETBACK_OIDC_REQUIRED_CLAIM: "groups=backup-admins" });
    const gina = await ssoSignIn(s, "gina");
    expect(await me(s, gina.session)).toMatchObject({ username: "gina", role: "viewer" });
    await ssoRefused(s, "dave", "does not give you the groups this server requires");
    await op.provider.setAccounts({ ...ACCOUNTS, gina: { preferred_username: "gina", groups: ["staff"] } });
    try {
      const removed = await ssoSignIn(s, "gina");
      expect(removed.status).toBe(403);
      expect(removed.session).toBeUndefined();
      const gone = (await refusals(s)).find((row) => row.details.name === "gina");
      expect(gone).toMatchObject({ targetKind: "user", targetId: (await userNamed(s, "gina"))?.id });
    } finally {
      await op.provider.setAccounts(ACCOUNTS);
    }
  });

  it("ends an SSO session FLEETBACK_OIDC_SESSION_MAX (8 h) after sign-in, however busy", async () => {
    const s = await setup(op.provider);
    const alice = await ssoSignIn(s, "alice");
    expect(alice.cookieLine).toMatch(/Max-Age=28800/);
    // Used every hour, so never idle: only the bound ends it.
    for (let hour = 1; hour < 8; hour++) {
      s.deps.clock.advance(60 * 60 * 1000);
      expect(await me(s, alice.session)).toMatchObject({ username: "alice" });
    }
    s.deps.clock.advance(60 * 60 * 1000);
    expect(await me(s, alice.session)).toBeNull();
  });

  it("ends password sessions once password sign-in is off and an SSO admin exists", async () => {
    const s = await setup(op.provider, { FLEETBACK_LOCAL_LOGIN: "off" });
    const local = createTestClient(s.app, BASE_URL);
    expect(
      (await local.json("POST", "/api/auth/login", { username: "admin", password: "correct horse battery" }))
        .status,
    ).toBe(200);
    expect(((await (await local.request("/api/auth/me")).json()) as { user: unknown }).user).toMatchObject({
      username: "admin",
    });
    const alice = await ssoSignIn(s, "alice");
    expect(await me(s, alice.session)).toMatchObject({ role: "admin" });
    expect((await local.request("/api/auth/me")).status).toBe(401);
    expect((await local.request("/api/users")).status).toBe(401);
    // The SSO admin's own session is untouched.
    expect(await me(s, alice.session)).toMatchObject({ username: "alice" });
  });
});

describe("single sign-on: a bad discovery document", () => {
  const op = providerPerSuite(ACCOUNTS);

  it("answers 503 naming the field while it is served, and a fixed one works without restart", async () => {
    const real = (await (
      await fetch(`${op.provider.issuer}/.well-known/openid-configuration`)
    ).json()) as Record<string, unknown>;
    const { authorization_endpoint: _dropped, ...broken } = real;
    await op.provider.setDiscovery(JSON.stringify(broken));
    const s = await setup(op.provider);
    const first = await s.app.request("/auth/sso", { headers: { Accept: "text/html" } });
    expect(first.status).toBe(503);
    expect(await first.text()).toContain("no usable authorization_endpoint");
    await op.provider.setDiscovery(undefined);
    // Within the retry delay the failure is remembered (no request per click to the provider)...
    const soon = await s.app.request("/auth/sso");
    expect(soon.status).toBe(503);
    // ...and after it, the good document is read and used.
    s.deps.clock.advance(DISCOVERY_RETRY_FIRST_MS);
    const signed = await ssoSignIn(s, "alice");
    expect(signed.status).toBe(303);
    expect(await me(s, signed.session)).toMatchObject({ username: "alice" });
    expect(s.deps.logLines.join("\n")).toContain("discovery failed");
    expect((await s.deps.db.select().from(users).where(eq(users.username, "alice"))).length).toBe(1);
  });
});

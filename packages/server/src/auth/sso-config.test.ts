import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config.js";

const BASE = {
  FLEETBACK_OIDC_ISSUER: "https://id.example.com",
  FLEETBACK_OIDC_CLIENT_ID: "fleetback",
  FLEETBACK_OIDC_CLIENT_SECRET: "s3cret-value",
};

function errorsOf(env: Record<string, string>): string[] {
  const result = loadConfig(env, "/srv");
  return result.ok ? [] : result.errors;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fleetback-sso-config-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("single sign-on settings", () => {
  it("defaults to no access, openid profile email and preferred_username, 8 h sessions, with local sign-in on", () => {
    const result = loadConfig(BASE, "/srv");
    expect(result.ok && result.config.sso).toMatchObject({
      scopes: "openid profile email",
      roleClaim: undefined,
      // A multi-tenant provider vouches for anyone: a default role would let anyone in.
      defaultRole: null,
      access: { allowedDomains: [], requiredClaim: undefined },
      sessionMaxMs: 8 * 3_600_000,
      usernameClaim: "preferred_username",
      displayName: "single sign-on",
      allowHttp: false,
    });
    expect(result.ok && result.config.localLogin).toBe(true);
  });

  it("reads the client secret from a file, trimmed, and names a missing file", async () => {
    const file = join(dir, "secret");
    await writeFile(file, "from-a-file\n");
    const { FLEETBACK_OIDC_CLIENT_SECRET: _, ...rest } = BASE;
    const result = loadConfig({ ...rest, FLEETBACK_OIDC_CLIENT_SECRET_FILE: file }, "/srv");
    expect(result.ok && result.config.sso?.clientSecret).toBe("from-a-file");
    expect(errorsOf({ ...rest, FLEETBACK_OIDC_CLIENT_SECRET_FILE: join(dir, "absent") })).toEqual([
      `FLEETBACK_OIDC_CLIENT_SECRET_FILE: cannot read ${join(dir, "absent")} (ENOENT)`,
    ]);
    expect(errorsOf({ ...BASE, FLEETBACK_OIDC_CLIENT_SECRET_FILE: file })[0]).toMatch(
      /^FLEETBACK_OIDC_CLIENT_SECRET and FLEETBACK_OIDC_CLIENT_SECRET_FILE: set one/,
    );
  });

  it("reads the allowed email domains, the required claim and the session bound", () => {
    const result = loadConfig(
      {
        ...BASE,
        FLEETBACK_OIDC_DEFAULT_ROLE: "viewer",
        FLEETBACK_OIDC_ALLOWED_DOMAINS: " Example.COM, @ops.example.org ,",
        FLEETBACK_OIDC_REQUIRED_CLAIM: "realm_access.roles = backup-admins",
        FLEETBACK_OIDC_SESSION_MAX: "90m",
      },
      "/srv",
    );
    expect(result.ok && result.config.sso).toMatchObject({
      defaultRole: "viewer",
      access: {
        allowedDomains: ["example.com", "ops.example.org"],
        requiredClaim: { name: "realm_access.roles", value: "backup-admins" },
      },
      sessionMaxMs: 90 * 60_000,
    });
  });

  it("accepts plain http only for a provider on this machine", () => {
    const local = loadConfig({ ...BASE, FLEETBACK_OIDC_ISSUER: "http://127.0.0.1:9000" }, "/srv");
    expect(local.ok && local.config.sso?.allowHttp).toBe(true);
    expect(errorsOf({ ...BASE, FLEETBACK_OIDC_ISSUER: "http://id.example.com" })).toEqual([
      "FLEETBACK_OIDC_ISSUER: must be an https:// URL (http:// only for a provider on this machine)",
    ]);
  });

  it.each([
    [{ FLEETBACK_OIDC_ISSUER: "not a url" }, "FLEETBACK_OIDC_ISSUER"],
    [{ FLEETBACK_OIDC_ISSUER: "https://id.example.com/?x=1" }, "FLEETBACK_OIDC_ISSUER"],
    [{ FLEETBACK_OIDC_CLIENT_ID: "" }, "FLEETBACK_OIDC_CLIENT_ID"],
    [{ FLEETBACK_OIDC_CLIENT_SECRET: "" }, "FLEETBACK_OIDC_CLIENT_SECRET"],
    [{ FLEETBACK_OIDC_SCOPES: "profile email" }, "FLEETBACK_OIDC_SCOPES"],
    [{ FLEETBACK_OIDC_ROLE_CLAIM: "groups", FLEETBACK_OIDC_ROLE_MAP: "admins" }, "FLEETBACK_OIDC_ROLE_MAP"],
    [
      { FLEETBACK_OIDC_ROLE_CLAIM: "groups", FLEETBACK_OIDC_ROLE_MAP: "admins=root" },
      "FLEETBACK_OIDC_ROLE_MAP",
    ],
    [{ FLEETBACK_OIDC_ROLE_MAP: "admins=admin" }, "FLEETBACK_OIDC_ROLE_MAP"],
    [{ FLEETBACK_OIDC_ROLE_CLAIM: "groups with spaces" }, "FLEETBACK_OIDC_ROLE_CLAIM"],
    [{ FLEETBACK_OIDC_DEFAULT_ROLE: "superuser" }, "FLEETBACK_OIDC_DEFAULT_ROLE"],
    [{ FLEETBACK_LOCAL_LOGIN: "maybe" }, "FLEETBACK_LOCAL_LOGIN"],
    [{ FLEETBACK_OIDC_ALLOWED_DOMAINS: "example.com,not a domain" }, "FLEETBACK_OIDC_ALLOWED_DOMAINS"],
    [{ FLEETBACK_OIDC_ALLOWED_DOMAINS: "*.example.com" }, "FLEETBACK_OIDC_ALLOWED_DOMAINS"],
    [{ FLEETBACK_OIDC_REQUIRED_CLAIM: "backup-admins" }, "FLEETBACK_OIDC_REQUIRED_CLAIM"],
    [{ FLEETBACK_OIDC_REQUIRED_CLAIM: "groups=" }, "FLEETBACK_OIDC_REQUIRED_CLAIM"],
    [{ FLEETBACK_OIDC_REQUIRED_CLAIM: "my groups=admins" }, "FLEETBACK_OIDC_REQUIRED_CLAIM"],
    [{ FLEETBACK_OIDC_SESSION_MAX: "1m" }, "FLEETBACK_OIDC_SESSION_MAX"],
    [{ FLEETBACK_OIDC_SESSION_MAX: "30d" }, "FLEETBACK_OIDC_SESSION_MAX"],
  ])("refuses %o in one line naming %s", (change, variable) => {
    const errors = errorsOf({ ...BASE, ...change });
    expect(errors).toHaveLength(1);
    expect(errors[0]?.startsWith(`${variable}: `)).toBe(true);
    expect(errors[0]).not.toContain("s3cret-value");
  });

  it("refuses single sign-on settings without an issuer, and local sign-in off without single sign-on", () => {
    expect(errorsOf({ FLEETBACK_OIDC_CLIENT_ID: "fleetback" })).toEqual([
      "FLEETBACK_OIDC_CLIENT_ID: set FLEETBACK_OIDC_ISSUER too, or unset it",
    ]);
    expect(errorsOf({ FLEETBACK_LOCAL_LOGIN: "off" })[0]).toMatch(
      /^FLEETBACK_LOCAL_LOGIN: off needs single sign-on/,
    );
  });
});

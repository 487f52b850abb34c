/**
 * @module testing/sso-harness
 * Drives single sign-on against the real OpenID provider process (testing/oidc-provider.ts) the
 * way a browser would: an app configured for that provider with a bootstrapped local admin, a
 * sign-in from /auth/sso through the provider's pages to the callback, and the session it left.
 * `providerPerSuite` runs the provider for the tests of one describe, `ssoAppPerSuite` that and an
 * app set up against it.
 */

import { users } from "@fleetback/db";
import { sleep, systemTimers } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import type { Hono } from "hono";
import { afterAll, beforeAll, expect } from "vitest";
import { createApp } from "../app.js";
import type { AppEnv } from "../auth/actor.js";
import { parseSsoConfig } from "../auth/sso-config.js";
import { createTestClient } from "./http.js";
import {
  type OidcAccounts,
  type OidcProviderProcess,
  signInAtProvider,
  startOidcProvider,
} from "./oidc-provider.js";
import { createTestDeps, type TestDeps, type TestDepsOptions } from "./test-deps.js";

export const BASE_URL = "http://fleetback.test:8080";
export const CALLBACK = `${BASE_URL}/auth/sso/callback`;
export interface Setup {
  deps: TestDeps;
  app: Hono<AppEnv>;
  /** Everything any answer carried, for the secret grep. */
  seen: string[];
}

/**
 * A provider holding `accounts`, redirecting to this app's callback, started before the tests of
 * the calling describe and stopped after them: `provider` is set once they run.
 */
export function providerPerSuite(
  accounts: OidcAccounts,
  options: { codeTtlSeconds?: number } = {},
): { provider: OidcProviderProcess } {
  const suite = {} as { provider: OidcProviderProcess };
  beforeAll(async () => {
    suite.provider = await startOidcProvider({ redirectUris: [CALLBACK], accounts, ...options });
  });
  afterAll(async () => {
    await suite.provider?.stop();
  });
  return suite;
}

/**
 * `providerPerSuite`, and an app set up against it with `env` before the describe's tests, which
 * share it: the object answered is that `Setup` and the provider, filled once the tests run.
 */
export function ssoAppPerSuite(
  accounts: OidcAccounts,
  env: Record<string, string> = {},
  options: { codeTtlSeconds?: number } = {},
): Setup & { provider: OidcProviderProcess } {
  const suite = providerPerSuite(accounts, options) as Setup & { provider: OidcProviderProcess };
  beforeAll(async () => {
    Object.assign(suite, await setup(suite.provider, env));
  });
  return suite;
}

export async function setup(
  provider: OidcProviderProcess,
  env: Record<string, string> = {},
  options: Pick<TestDepsOptions, "engine"> = {},
): Promise<Setup> {
  const errors: string[] = [];
  const sso = parseSsoConfig(
    {
      FLEETBACK_OIDC_ISSUER: provider.issuer,
      FLEETBACK_OIDC_CLIENT_ID: provider.clientId,
      FLEETBACK_OIDC_CLIENT_SECRET: provider.clientSecret,
      FLEETBACK_OIDC_SCOPES: "openid profile email groups",
      FLEETBACK_OIDC_ROLE_CLAIM: "groups",
      FLEETBACK_OIDC_ROLE_MAP: "fleet-admins=admin,fleet-ops=operator",
      ...env,
    },
    process.cwd(),
    errors,
  );
  expect(errors).toEqual([]);
  const deps = await createTestDeps({
    ...options,
    config: { baseUrl: BASE_URL, sso, localLogin: env.FLEETBACK_LOCAL_LOGIN !== "off" },
  });
  const app = createApp(deps);
  const admin = createTestClient(app, BASE_URL);
  const boot = await admin.json("POST", "/api/auth/bootstrap", {
    bootstrap_token: "test-bootstrap-token-0123456789",
    username: "admin",
    password: "correct horse battery",
  });
  expect(boot.status).toBe(201);
  return { deps, app, seen: [] };
}

export interface SsoResult {
  status: number;
  location: string | null;
  /** The session cookie pair when one was set. */
  session: string | undefined;
  /** The whole Set-Cookie line of the session, attributes included. */
  cookieLine: string | undefined;
  text: string;
}

/** Starts at /auth/sso, signs in at the provider as `login`, and hands the callback to the app. */
export async function ssoSignIn(
  s: Setup,
  login: string,
  options: { next?: string; tamper?: (callback: URL) => URL; waitMs?: number } = {},
): Promise<SsoResult & { callback: URL; ssoCookie: string }> {
  const start = await s.app.request(
    `/auth/sso${options.next ? `?next=${encodeURIComponent(options.next)}` : ""}`,
  );
  expect(start.status).toBe(303);
  const ssoCookie = (start.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  expect(ssoCookie).toMatch(/^fleetback_sso=./);
  const authorization = start.headers.get("location") ?? "";
  let callback = await signInAtProvider(authorization, login, CALLBACK);
  if (options.waitMs) {
    await sleep(systemTimers, options.waitMs);
  }
  callback = options.tamper ? options.tamper(callback) : callback;
  const result = await finish(s, callback, ssoCookie);
  return { ...result, callback, ssoCookie };
}

export async function finish(s: Setup, callback: URL, cookie: string | undefined): Promise<SsoResult> {
  const res = await s.app.request(`${callback.pathname}${callback.search}`, {
    headers: { Accept: "text/html", ...(cookie ? { Cookie: cookie } : {}) },
  });
  const text = await res.text();
  s.seen.push(text, JSON.stringify([...res.headers]));
  const cookieLine = res.headers
    .getSetCookie()
    .find((line) => line.startsWith("fleetback_session=") && !line.startsWith("fleetback_session=;"));
  const session = cookieLine?.split(";")[0];
  return { status: res.status, location: res.headers.get("location"), session, cookieLine, text };
}

/** Signs `account` in and expects Fleetback to refuse it (403) with a page saying `reason`. */
export async function ssoRefused(s: Setup, account: string, reason: string) {
  const refused = await ssoSignIn(s, account);
  expect(refused.status).toBe(403);
  expect(refused.text).toContain(reason);
  return refused;
}

/** The signed-in user of `session`; null when the server answers 401 (no session, or it ended). */
export async function me(s: Setup, session: string | undefined) {
  const res = await s.app.request("/api/auth/me", { headers: { Cookie: session ?? "" } });
  if (res.status === 401) {
    return null;
  }
  return ((await res.json()) as { user: { username: string; role: string } | null }).user;
}

export async function userNamed(s: Setup, username: string) {
  const rows = await s.deps.db.select().from(users).where(eq(users.username, username));
  return rows[0];
}

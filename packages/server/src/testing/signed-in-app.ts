/**
 * @module testing/signed-in-app
 * What most route tests start from: real deps on a fresh database, the app, its first admin
 * bootstrapped and signed in, and any other users created and signed in, each with a client of
 * its own, or on first use. `deps.close()` ends it. `signInOn` does the same over deps a test already holds (a test
 * server's, or deps it had to shape first) and leaves closing them to their owner.
 * `signedInPerTest` starts one before each test of a file, `signedInHostPerTest` one with an
 * operator, a viewer and a host, and `freshDepsPerTest` only the deps, for tests of what comes
 * before the first sign-in.
 */

import type { NewHost } from "@fleetback/db";
import { afterEach, beforeEach, expect } from "vitest";
import { createApp } from "../app.js";
import type { Role } from "../http/app-env.js";
import { createTestClient, type TestClient } from "./http.js";
import { seedHost } from "./seed.js";
import { createTestDeps, type TestDeps, type TestDepsOptions } from "./test-deps.js";

export const TEST_PASSWORD = "correct horse battery";
export const BOOTSTRAP_TOKEN = "test-bootstrap-token-0123456789";

export interface SignInOptions<U extends string = string> {
  /** The bootstrapped admin's username; a test that reads it back (audit, pages) names its own. */
  adminName?: string;
  /** Users the admin creates, in order, each signed in on a client of its own. */
  users?: ReadonlyArray<{ username: U; role: Role }>;
}

export interface SignedInApp<U extends string = string> {
  deps: TestDeps;
  app: ReturnType<typeof createApp>;
  /** The bootstrapped admin ("admin" unless `adminName` says otherwise). */
  admin: TestClient;
  /** The admin's user id, for a test that finds it as an audit entry's target. */
  adminId: string;
  /** A client for each user asked for, signed in, by username. */
  users: Record<U, TestClient>;
  /** A client with no session (an agent, an anonymous browser). */
  anonymous: () => TestClient;
  /** Signs an existing user in with the test password, on a new client: another session. */
  login: (username: string) => Promise<TestClient>;
  /** Creates a user with the test password, as the admin, and signs it in on a new client. */
  addUser: (username: string, role: Role) => Promise<TestClient>;
  /**
   * `addUser` deferred to the first call, then the same client: each user costs a password hash,
   * which a busy machine makes slow, and not every test of a file needs every role.
   */
  userOnDemand: (username: string, role: Role) => () => Promise<TestClient>;
}

export async function startSignedInApp<const U extends string = never>(
  options: SignInOptions<U> & { deps?: TestDepsOptions } = {},
): Promise<SignedInApp<U>> {
  return signInOn(await createTestDeps(options.deps), options);
}

export async function signInOn<const U extends string = never>(
  deps: TestDeps,
  options: SignInOptions<U> = {},
): Promise<SignedInApp<U>> {
  const app = createApp(deps);
  const client = () => createTestClient(app, deps.config.baseUrl);
  const login = async (username: string) => {
    const signedIn = client();
    expect(
      (await signedIn.json("POST", "/api/auth/login", { username, password: TEST_PASSWORD })).status,
    ).toBe(200);
    return signedIn;
  };
  const admin = client();
  const boot = await admin.json("POST", "/api/auth/bootstrap", {
    bootstrap_token: BOOTSTRAP_TOKEN,
    username: options.adminName ?? "admin",
    password: TEST_PASSWORD,
  });
  expect(boot.status).toBe(201);
  const adminId = ((await boot.json()) as { user: { id: string } }).user.id;
  const addUser = async (username: string, role: Role) => {
    expect((await admin.json("POST", "/api/users", { username, password: TEST_PASSWORD, role })).status).toBe(
      201,
    );
    return login(username);
  };
  const userOnDemand = (username: string, role: Role) => {
    let signedIn: Promise<TestClient> | undefined;
    return () => {
      signedIn ??= addUser(username, role);
      return signedIn;
    };
  };
  const users = {} as Record<U, TestClient>;
  for (const { username, role } of options.users ?? []) {
    users[username] = await addUser(username, role);
  }
  return { deps, app, admin, adminId, users, anonymous: client, login, addUser, userOnDemand };
}

/** Posts the sign-in form from `browser` with the test password, and `next` when given. */
export function postLoginForm(browser: TestClient, username: string, next?: string): Promise<Response> {
  return browser.form("/login", {
    username,
    password: TEST_PASSWORD,
    ...(next === undefined ? {} : { next }),
  });
}

export interface SignedInHost extends SignedInApp<"oper" | "looker"> {
  operator: TestClient;
  viewer: TestClient;
  /** The one host seeded; no agent is connected to it. */
  hostId: string;
}

/**
 * `startSignedInApp(options)` before each test of the calling file, closed after it. The object
 * answered is refilled for each test, so the file's tests share a name for it and none of its state.
 */
export function signedInPerTest<const U extends string = never>(
  options: SignInOptions<U> = {},
): SignedInApp<U> {
  const current = {} as SignedInApp<U>;
  beforeEach(async () => {
    Object.assign(current, await startSignedInApp(options));
  });
  afterEach(async () => {
    await current.deps.close();
  });
  return current;
}

/**
 * An app with its admin, an operator ("oper"), a viewer ("looker") and one host, started before
 * each test of the calling file and closed after it, refilled like `signedInPerTest`'s.
 */
export function signedInHostPerTest(host: Partial<NewHost> = {}): SignedInHost {
  const current = signedInPerTest({
    users: [
      { username: "oper", role: "operator" },
      { username: "looker", role: "viewer" },
    ],
  }) as SignedInHost;
  beforeEach(async () => {
    const seeded = await seedHost(current.deps, host);
    Object.assign(current, {
      operator: current.users.oper,
      viewer: current.users.looker,
      hostId: seeded.host.id,
    });
  });
  return current;
}

export interface FreshDeps {
  /** This test's deps, on a fresh database with no user yet. */
  deps: TestDeps;
  /** Bootstraps the first admin, "root-admin", on them: `client` is its signed-in session. */
  withAdmin: () => Promise<{ app: SignedInApp["app"]; client: TestClient }>;
}

/**
 * Deps on a fresh database before each test of the calling file (or `describe`), closed after it.
 * Like `signedInHostPerTest`, the object answered is refilled for each test.
 */
export function freshDepsPerTest(): FreshDeps {
  const current = {
    withAdmin: async () => {
      const { app, admin } = await signInOn(current.deps, { adminName: "root-admin" });
      return { app, client: admin };
    },
  } as FreshDeps;
  beforeEach(async () => {
    current.deps = await createTestDeps();
  });
  afterEach(async () => {
    await current.deps.close();
  });
  return current;
}

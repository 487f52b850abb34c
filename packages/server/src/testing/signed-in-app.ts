/**
 * @module testing/signed-in-app
 * What most route tests start from: real deps on a fresh database, the app, its first admin
 * bootstrapped and signed in, and any other users created and signed in, each with a client of
 * its own, or on first use. `deps.close()` ends it. `signInOn` does the same over deps a test already holds (a test
 * server's, or deps it had to shape first) and leaves closing them to their owner.
 * `signedInHostPerTest` starts one with an operator, a viewer and a host before each test of a file.
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

export interface SignedInHost extends SignedInApp<"oper" | "looker"> {
  operator: TestClient;
  viewer: TestClient;
  /** The one host seeded; no agent is connected to it. */
  hostId: string;
}

/**
 * An app with its admin, an operator ("oper"), a viewer ("looker") and one host, started before
 * each test of the calling file and closed after it. The object answered is refilled for each
 * test, so the file's tests share a name for it and none of its state.
 */
export function signedInHostPerTest(host: Partial<NewHost> = {}): SignedInHost {
  const current = {} as SignedInHost;
  beforeEach(async () => {
    const started = await startSignedInApp({
      users: [
        { username: "oper", role: "operator" },
        { username: "looker", role: "viewer" },
      ],
    });
    const seeded = await seedHost(started.deps, host);
    Object.assign(current, started, {
      operator: started.users.oper,
      viewer: started.users.looker,
      hostId: seeded.host.id,
    });
  });
  afterEach(async () => {
    await current.deps.close();
  });
  return current;
}

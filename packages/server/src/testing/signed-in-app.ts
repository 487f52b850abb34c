/**
 * @module testing/signed-in-app
 * What most route tests start from: real deps on a fresh database, the app, its first admin
 * bootstrapped and signed in, and any other users created and signed in, each with a client of
 * its own. `deps.close()` ends it.
 */

import { expect } from "vitest";
import { createApp } from "../app.js";
import type { Role } from "../http/app-env.js";
import { createTestClient, type TestClient } from "./http.js";
import { createTestDeps, type TestDeps, type TestDepsOptions } from "./test-deps.js";

export const TEST_PASSWORD = "correct horse battery";
export const BOOTSTRAP_TOKEN = "test-bootstrap-token-0123456789";

export interface SignedInApp {
  deps: TestDeps;
  app: ReturnType<typeof createApp>;
  /** The bootstrapped admin ("admin"). */
  admin: TestClient;
  /** A client for each user asked for, signed in, by username. */
  users: Record<string, TestClient>;
  /** A client with no session (an agent, an anonymous browser). */
  anonymous: () => TestClient;
}

export async function startSignedInApp(
  options: { users?: Array<{ username: string; role: Role }>; deps?: TestDepsOptions } = {},
): Promise<SignedInApp> {
  const deps = await createTestDeps(options.deps);
  const app = createApp(deps);
  const client = () => createTestClient(app, deps.config.baseUrl);
  const admin = client();
  const boot = await admin.json("POST", "/api/auth/bootstrap", {
    bootstrap_token: BOOTSTRAP_TOKEN,
    username: "admin",
    password: TEST_PASSWORD,
  });
  expect(boot.status).toBe(201);
  const users: Record<string, TestClient> = {};
  for (const { username, role } of options.users ?? []) {
    expect((await admin.json("POST", "/api/users", { username, password: TEST_PASSWORD, role })).status).toBe(
      201,
    );
    const signedIn = client();
    expect(
      (await signedIn.json("POST", "/api/auth/login", { username, password: TEST_PASSWORD })).status,
    ).toBe(200);
    users[username] = signedIn;
  }
  return { deps, app, admin, users, anonymous: client };
}

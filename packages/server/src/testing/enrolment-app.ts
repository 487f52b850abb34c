/**
 * @module testing/enrolment-app
 * What the enrolment tests start from: a fresh app whose first admin is signed in (the operator's
 * client), a second client for the agent's requests, and the host facts an agent sends.
 */
import { expect } from "vitest";
import { createApp } from "../app.js";
import { createTestClient, type TestClient } from "./http.js";
import { createTestDeps, type TestDeps } from "./test-deps.js";

export const ADMIN_PASSWORD = "correct horse battery";

/** An agent's hostname, platform and versions, as enrol and announce requests carry them. */
export const HOST_INFO = {
  hostname: "web-01",
  os: "linux",
  arch: "amd64",
  agent_version: "0.1.0",
  tool_version: "0.18.0",
};

export interface EnrolmentApp {
  deps: TestDeps;
  operator: TestClient;
  agent: TestClient;
}

export async function startEnrolmentApp(): Promise<EnrolmentApp> {
  const deps = await createTestDeps();
  const app = createApp(deps);
  const operator = createTestClient(app, deps.config.baseUrl);
  const agent = createTestClient(app, deps.config.baseUrl);
  const res = await operator.json("POST", "/api/auth/bootstrap", {
    bootstrap_token: "test-bootstrap-token-0123456789",
    username: "admin",
    password: ADMIN_PASSWORD,
  });
  expect(res.status).toBe(201);
  return { deps, operator, agent };
}

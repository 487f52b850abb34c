/**
 * @module testing/enrolment-app
 * What the enrolment tests start from: a fresh app whose first admin is signed in (the operator's
 * client), a second client for the agent's requests, the host facts an agent sends, and a host
 * enrolled through the API for tests that start from one. `enrolmentAppPerTest` starts one before
 * each test of a file.
 */
import { afterEach, beforeEach } from "vitest";
import type { TestClient } from "./http.js";
import { startSignedInApp, TEST_PASSWORD } from "./signed-in-app.js";
import type { TestDeps, TestDepsOptions } from "./test-deps.js";

export const ADMIN_PASSWORD = TEST_PASSWORD;

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

/** `options` reach the deps: a test of both engines passes its database. */
export async function startEnrolmentApp(options?: TestDepsOptions): Promise<EnrolmentApp> {
  const { deps, admin, anonymous } = await startSignedInApp(options ? { deps: options } : {});
  return { deps, operator: admin, agent: anonymous() };
}

/**
 * An enrolment app started before each test of the calling file and closed after it. The object
 * answered is refilled for each test, so the file's tests share a name for it and none of its state.
 */
export function enrolmentAppPerTest(): EnrolmentApp {
  const current = {} as EnrolmentApp;
  beforeEach(async () => {
    Object.assign(current, await startEnrolmentApp());
  });
  afterEach(async () => {
    await current.deps.close();
  });
  return current;
}

/**
 * Mints a plain token as `client` and enrols `host` with it: a host that exists only as the API
 * made it, with nothing bound. Returns its id.
 */
export async function enrolHost(client: TestClient, host: typeof HOST_INFO): Promise<string> {
  const minted = (await (await client.json("POST", "/api/enrollment-tokens", {})).json()) as {
    token: string;
  };
  const enrolled = await client.json("POST", "/api/agents/enroll", { token: minted.token, ...host });
  return ((await enrolled.json()) as { host_id: string }).host_id;
}

/**
 * A dashboard with no host says how to get the first one in: a link to the enrol page for those
 * who may enrol (operators and admins), and whom to ask for the others.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../app.js";
import { createTestClient } from "../testing/http.js";
import { seedHost } from "../testing/seed.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";

const PASSWORD = "correct horse battery";
let deps: TestDeps | undefined;
afterEach(async () => {
  await deps?.close();
  deps = undefined;
});

describe("empty dashboard", () => {
  it("links operators to the enrol page, tells viewers whom to ask, and goes once a host exists", async () => {
    deps = await createTestDeps();
    const app = createApp(deps);
    const admin = createTestClient(app, deps.config.baseUrl);
    await admin.json("POST", "/api/auth/bootstrap", {
      bootstrap_token: "test-bootstrap-token-0123456789",
      username: "admin",
      password: PASSWORD,
    });
    await admin.json("POST", "/api/users", { username: "looker", password: PASSWORD, role: "viewer" });
    const viewer = createTestClient(app, deps.config.baseUrl);
    await viewer.json("POST", "/api/auth/login", { username: "looker", password: PASSWORD });

    const forAdmin = await (await admin.request("/")).text();
    expect(forAdmin).toContain('data-testid="empty-fleet"');
    expect(forAdmin).toMatch(
      /<a href="\/enroll"[^>]*data-testid="enrol-first-host">Enrol the first host<\/a>/,
    );
    const forViewer = await (await viewer.request("/")).text();
    expect(forViewer).toContain('data-testid="empty-fleet"');
    expect(forViewer).not.toContain("enrol-first-host");
    expect(forViewer).toContain("Ask an operator or an admin to enrol the first host.");

    await seedHost(deps, { name: "web-1" });
    expect(await (await admin.request("/")).text()).not.toContain("empty-fleet");
  });
});

/**
 * A dashboard with no host says how to get the first one in: a link to the enrol page for those
 * who may enrol (operators and admins), and whom to ask for the others.
 */
import { afterEach, describe, expect, it } from "vitest";
import { seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps | undefined;
afterEach(async () => {
  await deps?.close();
  deps = undefined;
});

describe("empty dashboard", () => {
  it("links operators to the enrol page, tells viewers whom to ask, and goes once a host exists", async () => {
    const started = await startSignedInApp({ users: [{ username: "looker", role: "viewer" }] });
    deps = started.deps;
    const { admin, users } = started;
    const viewer = users.looker;

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

/**
 * Issue 37.2: a policy reaches hosts without a per-host step: a host enrolled with a labelled
 * token, and one whose labels change, get its groups and schedules (and lose them with the
 * label); a host's edit of a policy group is its override, kept over the next version; a policy
 * group's name and existence are the policy's; only admins write policies.
 */
import { sourceGroups } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HOST_INFO, startEnrolmentApp } from "../testing/enrolment-app.js";
import type { TestClient } from "../testing/http.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps;
let admin: TestClient;
let agent: TestClient;

const POLICY = {
  name: "prod",
  selector: "env=prod",
  spec: {
    groups: [{ name: "etc", includes: ["/etc"], retention_policy: { daily: 7 } }],
    schedules: [{ name: "nightly", cron: "0 2 * * *", groups: ["etc"] }],
  },
};

beforeEach(async () => {
  ({ deps, operator: admin, agent } = await startEnrolmentApp());
});
afterEach(async () => {
  await deps.close();
});

async function json<T>(res: Response, status: number): Promise<T> {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(status);
  return body as T;
}

async function enrol(labels: Record<string, string>): Promise<string> {
  const { token } = await json<{ token: string }>(
    await admin.json("POST", "/api/enrollment-tokens", { labels }),
    201,
  );
  const res = await agent.json("POST", "/api/agents/enroll", {
    token,
    ...HOST_INFO,
    hostname: `h-${labels.env}`,
  });
  return (await json<{ host_id: string }>(res, 201)).host_id;
}

const groupsOf = (hostId: string) =>
  deps.db.select().from(sourceGroups).where(eq(sourceGroups.hostId, hostId));

describe("policies reach hosts by their labels", () => {
  it("a host enrolled with a labelled token has the policy's group and schedule at once", async () => {
    const policy = await json<{ policy: { id: string } }>(
      await admin.json("POST", "/api/policies", POLICY),
      201,
    );
    const prod = await enrol({ env: "prod" });
    const dev = await enrol({ env: "dev" });
    expect((await groupsOf(prod)).map((g) => [g.name, g.policyId, g.policyVersion])).toEqual([
      ["etc", policy.policy.id, 1],
    ]);
    const schedules = await json<{ schedules: Array<{ cron: string }>; schedule_version: number }>(
      await admin.request(`/api/hosts/${prod}/schedules`),
      200,
    );
    expect(schedules.schedules.map((s) => s.cron)).toEqual(["0 2 * * *"]);
    expect(schedules.schedule_version).toBe(1);
    expect(await groupsOf(dev)).toEqual([]);

    // Labelled later: the group comes; unlabelled: it goes.
    await json(await admin.json("PATCH", `/api/hosts/${dev}/labels`, { set: { env: "prod" } }), 200);
    expect((await groupsOf(dev)).map((g) => g.name)).toEqual(["etc"]);
    await json(
      await admin.json("POST", "/api/hosts/labels", { selector: "env=prod", set: { env: "staging" } }),
      200,
    );
    expect(await groupsOf(dev)).toEqual([]);
    expect(await groupsOf(prod)).toEqual([]);
  });

  it("keeps a host's edit of a policy group over the next version; its name and existence are the policy's", async () => {
    const { policy } = await json<{ policy: { id: string } }>(
      await admin.json("POST", "/api/policies", POLICY),
      201,
    );
    const host = await enrol({ env: "prod" });
    const [group] = await groupsOf(host);
    const path = `/api/hosts/${host}/source-groups/${group?.id}`;
    await json(await admin.json("PUT", path, { excludes: ["/etc/ssl"] }), 200);
    const renamed = await admin.json("PUT", path, { name: "config" });
    expect(renamed.status).toBe(409);
    expect(((await renamed.json()) as { message: string }).message).toContain("comes from policy prod");
    const deleted = await admin.json("DELETE", path);
    expect(deleted.status).toBe(409);

    const next = {
      ...POLICY,
      spec: { ...POLICY.spec, groups: [{ ...POLICY.spec.groups[0], excludes: ["*.bak"], retry_max: 1 }] },
    };
    await json(await admin.json("PUT", `/api/policies/${policy.id}`, next), 200);
    const [after] = await groupsOf(host);
    expect([after?.excludes, after?.retryMax, after?.policyVersion, after?.overrides]).toEqual([
      ["/etc/ssl"],
      1,
      2,
      { excludes: ["/etc/ssl"] },
    ]);
    const provenance = await json<{
      groups: Array<{ name: string; overridden: string[]; from: { version: number } }>;
    }>(await admin.request(`/api/hosts/${host}/policies`), 200);
    expect(provenance.groups).toEqual([
      expect.objectContaining({
        name: "etc",
        overridden: ["excludes"],
        from: { id: policy.id, name: "prod", version: 2 },
      }),
    ]);
  });

  it("names the bad field's path and changes nothing; only admins write policies", async () => {
    const bad = await admin.json("POST", "/api/policies", {
      ...POLICY,
      spec: { groups: [{ name: "etc", includes: ["etc"] }] },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/spec\.groups\.0\.includes\.0/);
    await json(
      await admin.json("POST", "/api/users", {
        username: "ops",
        password: "correct horse battery",
        role: "operator",
      }),
      201,
    );
    const ops = (await import("../testing/http.js")).createTestClient(
      (await import("../app.js")).createApp(deps),
      deps.config.baseUrl,
    );
    await json(
      await ops.json("POST", "/api/auth/login", { username: "ops", password: "correct horse battery" }),
      200,
    );
    expect((await ops.json("POST", "/api/policies", POLICY)).status).toBe(403);
    expect((await json<{ policies: unknown[] }>(await ops.request("/api/policies"), 200)).policies).toEqual(
      [],
    );
  });
});

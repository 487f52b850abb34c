import { hosts, scheduleSourceGroups, schedules } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../app.js";
import { createTestClient, csrfFrom, type TestClient } from "../testing/http.js";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { seedHost } from "../testing/seed.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";

const PASSWORD = "correct horse battery";

let deps: TestDeps;
let admin: TestClient;
let hostId: string;
let groupId: string;
let foreignGroupId: string;

beforeEach(async () => {
  deps = await createTestDeps();
  admin = createTestClient(createApp(deps), deps.config.baseUrl);
  await admin.json("POST", "/api/auth/bootstrap", {
    bootstrap_token: "test-bootstrap-token-0123456789",
    username: "admin",
    password: PASSWORD,
  });
  hostId = (await seedHost(deps, { name: "db-01" })).host.id;
  const otherHost = (await seedHost(deps, { name: "db-02" })).host.id;
  const made = async (host: string) =>
    (
      (await (
        await admin.json("POST", `/api/hosts/${host}/source-groups`, { name: "etc", includes: ["/etc"] })
      ).json()) as { source_group: { id: string } }
    ).source_group.id;
  groupId = await made(hostId);
  foreignGroupId = await made(otherHost);
});
afterEach(async () => {
  await deps.close();
});

const url = () => `/api/hosts/${hostId}/schedules`;

async function versionOf(id: string): Promise<number | undefined> {
  const [host] = await deps.db.select({ v: hosts.scheduleVersion }).from(hosts).where(eq(hosts.id, id));
  return host?.v;
}

describe("schedules", () => {
  it("refuses bad cron, no groups and another host's group with 400 naming the field; nothing written", async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ cron: "61 * * * *", source_group_ids: [groupId] }, /^cron: /],
      [{ cron: "@daily", source_group_ids: [groupId] }, /^cron: /],
      [{ cron: "* * * *", source_group_ids: [groupId] }, /^cron: /],
      [{ cron: "0 0 0 * * * *", source_group_ids: [groupId] }, /^cron: /],
      [{ cron: "0 2 * * *", source_group_ids: [] }, /^source_group_ids: /],
      [{ cron: "0 2 * * *", source_group_ids: [foreignGroupId] }, /^source_group_ids: /],
      [{ cron: "0 2 * * *", source_group_ids: [groupId, foreignGroupId] }, /^source_group_ids: /],
    ];
    for (const [body, pattern] of cases) {
      const res = await admin.json("POST", url(), body);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
      expect(((await res.json()) as { message: string }).message).toMatch(pattern);
    }
    expect(await deps.db.select().from(schedules)).toEqual([]);
    expect(await deps.db.select().from(scheduleSourceGroups)).toEqual([]);
    expect(await versionOf(hostId)).toBe(0);
  });

  it("bumps the version on every change and pushes schedule.set to a connected agent", async () => {
    const agent = createRecordingConnection(hostId);
    deps.hub.register(agent);
    const created = await admin.json("POST", url(), { cron: "0 */2 * * * *", source_group_ids: [groupId] });
    expect(created.status).toBe(201);
    const body = (await created.json()) as {
      schedule: { id: string };
      schedule_version: number;
      pushed: boolean;
    };
    expect(body).toMatchObject({
      schedule: { cron: "0 */2 * * * *", enabled: true, source_group_ids: [groupId] },
      schedule_version: 1,
      schedule_acked_version: 0,
      pushed: true,
    });
    expect(agent.frames.at(-1)).toMatchObject({
      type: "schedule.set",
      payload: {
        version: 1,
        schedules: [{ id: body.schedule.id, cron: "0 */2 * * * *", enabled: true, source_groups: [groupId] }],
      },
    });
    const edited = await admin.json("PUT", `${url()}/${body.schedule.id}`, {
      cron: "30 3 * * 1-5",
      enabled: false,
      source_group_ids: [groupId],
    });
    expect(await edited.json()).toMatchObject({ schedule: { enabled: false }, schedule_version: 2 });
    expect(agent.frames.at(-1)).toMatchObject({ type: "schedule.set", payload: { version: 2 } });
    const bad = await admin.json("PUT", `${url()}/${body.schedule.id}`, {
      cron: "x",
      source_group_ids: [groupId],
    });
    expect(bad.status).toBe(400);
    expect(await versionOf(hostId)).toBe(2);
    const removed = await admin.json("DELETE", `${url()}/${body.schedule.id}`);
    expect(await removed.json()).toEqual({ schedule_version: 3, schedule_acked_version: 0 });
    expect(agent.frames.at(-1)).toMatchObject({
      type: "schedule.set",
      payload: { version: 3, schedules: [] },
    });
    const list = (await (await admin.request(url())).json()) as Record<string, unknown>;
    expect(list).toEqual({ schedules: [], schedule_version: 3, schedule_acked_version: 0 });
  });

  it("is edited from the sources page forms", async () => {
    const csrf = csrfFrom(await (await admin.request(`/hosts/${hostId}/sources`)).text());
    const bad = await admin.form(
      `/hosts/${hostId}/schedules`,
      { _csrf: csrf, cron: "0 2 * * *" },
      { "HX-Request": "true" },
    );
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/^source_group_ids: /);
    const ok = await admin.form(`/hosts/${hostId}/schedules`, {
      _csrf: csrf,
      cron: "0 2 * * *",
      enabled: "on",
      source_group_ids: groupId,
    });
    expect(ok.status).toBe(303);
    const page = await (await admin.request(`/hosts/${hostId}/sources`)).text();
    expect(page).toContain("<code>0 2 * * *</code>");
    expect(page).toContain("Agent has version 0 of 1");
  });
});

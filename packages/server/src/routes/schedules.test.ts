import { hosts, scheduleSourceGroups, schedules } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { csrfFrom } from "../testing/http.js";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { seedHost } from "../testing/seed.js";
import { signedInPerTest } from "../testing/signed-in-app.js";

const s = signedInPerTest();
let hostId: string;
let groupId: string;
let foreignGroupId: string;

beforeEach(async () => {
  hostId = (await seedHost(s.deps, { name: "db-01" })).host.id;
  const otherHost = (await seedHost(s.deps, { name: "db-02" })).host.id;
  const made = async (host: string) =>
    (
      (await (
        await s.admin.json("POST", `/api/hosts/${host}/source-groups`, { name: "etc", includes: ["/etc"] })
      ).json()) as { source_group: { id: string } }
    ).source_group.id;
  groupId = await made(hostId);
  foreignGroupId = await made(otherHost);
});

const url = () => `/api/hosts/${hostId}/schedules`;

async function versionOf(id: string): Promise<number | undefined> {
  const [host] = await s.deps.db.select({ v: hosts.scheduleVersion }).from(hosts).where(eq(hosts.id, id));
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
      const res = await s.admin.json("POST", url(), body);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
      expect(((await res.json()) as { message: string }).message).toMatch(pattern);
    }
    expect(await s.deps.db.select().from(schedules)).toEqual([]);
    expect(await s.deps.db.select().from(scheduleSourceGroups)).toEqual([]);
    expect(await versionOf(hostId)).toBe(0);
  });

  it("bumps the version on every change and pushes schedule.set to a connected agent", async () => {
    const agent = createRecordingConnection(hostId);
    s.deps.hub.register(agent);
    const created = await s.admin.json("POST", url(), { cron: "0 */2 * * * *", source_group_ids: [groupId] });
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
    const edited = await s.admin.json("PUT", `${url()}/${body.schedule.id}`, {
      cron: "30 3 * * 1-5",
      enabled: false,
      source_group_ids: [groupId],
    });
    expect(await edited.json()).toMatchObject({ schedule: { enabled: false }, schedule_version: 2 });
    expect(agent.frames.at(-1)).toMatchObject({ type: "schedule.set", payload: { version: 2 } });
    const bad = await s.admin.json("PUT", `${url()}/${body.schedule.id}`, {
      cron: "x",
      source_group_ids: [groupId],
    });
    expect(bad.status).toBe(400);
    expect(await versionOf(hostId)).toBe(2);
    const removed = await s.admin.json("DELETE", `${url()}/${body.schedule.id}`);
    expect(await removed.json()).toEqual({ schedule_version: 3, schedule_acked_version: 0 });
    expect(agent.frames.at(-1)).toMatchObject({
      type: "schedule.set",
      payload: { version: 3, schedules: [] },
    });
    const list = (await (await s.admin.request(url())).json()) as Record<string, unknown>;
    expect(list).toEqual({ schedules: [], schedule_version: 3, schedule_acked_version: 0 });
  });

  it("is edited from the sources page forms", async () => {
    const csrf = csrfFrom(await (await s.admin.request(`/hosts/${hostId}/sources`)).text());
    const bad = await s.admin.form(
      `/hosts/${hostId}/schedules`,
      { _csrf: csrf, cron: "0 2 * * *" },
      { "HX-Request": "true" },
    );
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/^source_group_ids: /);
    const ok = await s.admin.form(`/hosts/${hostId}/schedules`, {
      _csrf: csrf,
      cron: "0 2 * * *",
      enabled: "on",
      source_group_ids: groupId,
    });
    expect(ok.status).toBe(303);
    const page = await (await s.admin.request(`/hosts/${hostId}/sources`)).text();
    expect(page).toContain("<code>0 2 * * *</code>");
    expect(page).toContain("Agent has version 0 of 1");
  });

  it("reads as a sentence with its next three runs in the host's zone, on the page and in the API (issue 17)", async () => {
    // The test clock is 2026-11-21T12:00Z, a Saturday; the agent reported New York.
    await s.deps.db.update(hosts).set({ timeZone: "America/New_York" }).where(eq(hosts.id, hostId));
    const made = await s.admin.json("POST", url(), { cron: "0 22 * * 1-5", source_group_ids: [groupId] });
    expect(made.status).toBe(201);
    const weekdayRuns = ["2026-11-24T03:00:00.000Z", "2026-11-25T03:00:00.000Z", "2026-11-26T03:00:00.000Z"];
    expect(await made.json()).toMatchObject({
      schedule: {
        cron: "0 22 * * 1-5",
        description: "Every weekday (Monday to Friday) at 22:00",
        next_runs: weekdayRuns,
        time_zone: "America/New_York",
      },
    });
    const odd = await s.admin.json("POST", url(), {
      cron: "0 3 1 * 1",
      enabled: false,
      source_group_ids: [groupId],
    });
    expect(odd.status).toBe(201);
    const { schedules: listed } = (await (await s.admin.json("GET", url())).json()) as {
      schedules: Array<{ cron: string; description: string | null; next_runs: string[]; time_zone: string }>;
    };
    // Both are made in the same instant of the test clock, so the list's order between them is not fixed.
    const byCron = [...listed].sort((a, b) => a.cron.localeCompare(b.cron));
    expect(
      byCron.map(({ cron, description, next_runs, time_zone }) => ({
        cron,
        description,
        next_runs,
        time_zone,
      })),
    ).toEqual([
      {
        cron: "0 22 * * 1-5",
        description: "Every weekday (Monday to Friday) at 22:00",
        next_runs: weekdayRuns,
        time_zone: "America/New_York",
      },
      // No sentence for cron's day-of-month OR weekday; a disabled schedule has no next runs.
      { cron: "0 3 1 * 1", description: null, next_runs: [], time_zone: "America/New_York" },
    ]);

    const page = await (await s.admin.request(`/hosts/${hostId}/sources`)).text();
    expect(page).toContain("Schedules run in the host's time zone, America/New_York.");
    expect(page).toContain(
      '<span data-testid="schedule-description">Every weekday (Monday to Friday) at 22:00</span>',
    );
    // Pinned to the host's zone (data-zone), which the reader's browser keeps as well.
    const runs = [
      ...page.matchAll(
        /<time datetime="([^"]+)" title="[^"]+" data-zone="America\/New_York">([^<]+)<\/time>/g,
      ),
    ].filter(([, at]) => weekdayRuns.includes(new Date(at ?? "").toISOString()));
    // 22:00 in New York, with its offset, so nobody guesses which 22:00.
    expect(runs.map(([, , text]) => text)).toEqual([
      "23 Nov, 22:00 GMT-5",
      "24 Nov, 22:00 GMT-5",
      "25 Nov, 22:00 GMT-5",
    ]);
    expect(page).toContain("none: disabled");

    // Without a reported zone the schedule is read in FLEETBACK_TZ, and the page says so.
    await s.deps.db.update(hosts).set({ timeZone: null }).where(eq(hosts.id, hostId));
    const fallback = await (await s.admin.request(`/hosts/${hostId}/sources`)).text();
    expect(fallback).toContain(`Schedules are shown in ${s.deps.config.timeZone} (FLEETBACK_TZ)`);
  });
});

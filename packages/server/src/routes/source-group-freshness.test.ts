import { sourceGroups } from "@fleetback/db";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { reportSnapshots } from "../testing/health-test-support.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps;
let admin: TestClient;
let hostId: string;

beforeEach(async () => {
  // The test clock starts at 2026-11-21T12:00:00Z.
  ({ deps, admin } = await startSignedInApp());
  hostId = (await seedHost(deps, { name: "db-01", timeZone: "Europe/Berlin" })).host.id;
});
afterEach(async () => {
  await deps.close();
});

const groupsUrl = () => `/api/hosts/${hostId}/source-groups`;

describe("source group freshness and grace", () => {
  it("refuses a grace below 10 s or above a year, naming the field", async () => {
    for (const grace of [9, 31_536_001, 1.5, "600"]) {
      const res = await admin.json("POST", groupsUrl(), {
        name: "etc",
        includes: ["/etc"],
        grace_seconds: grace,
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(/^grace_seconds: /);
    }
    expect(await deps.db.select().from(sourceGroups)).toEqual([]);
  });

  it("lists each group's freshness, judged with its own grace in the agent's zone", async () => {
    const created = await admin.json("POST", groupsUrl(), {
      name: "etc",
      includes: ["/etc"],
      grace_seconds: 600,
    });
    expect(created.status).toBe(201);
    const group = ((await created.json()) as { source_group: { id: string; grace_seconds: number } })
      .source_group;
    expect(group.grace_seconds).toBe(600);
    let listed = (await (await admin.request(groupsUrl())).json()) as {
      source_groups: Array<{ freshness: Record<string, unknown> }>;
    };
    expect(listed.source_groups[0]?.freshness).toMatchObject({ state: "unscheduled", deadline: null });

    const schedule = await admin.json("POST", `/api/hosts/${hostId}/schedules`, {
      cron: "15 13 * * *",
      source_group_ids: [group.id],
    });
    expect(schedule.status).toBe(201);
    await reportSnapshots(deps, hostId, [{ time: "2026-11-21T11:55:00Z", tags: ["etc"] }]);
    listed = (await (await admin.request(groupsUrl())).json()) as typeof listed;
    expect(listed.source_groups[0]?.freshness).toMatchObject({
      state: "fresh",
      last_snapshot_at: "2026-11-21T11:55:00.000Z",
      // The grace counts from the due time, not from the snapshot.
      deadline: "2026-11-21T12:25:00.000Z",
      // 13:15 in Berlin (CET, UTC+1) is 12:15Z.
      due_at: "2026-11-21T12:15:00.000Z",
      next_fire_at: "2026-11-21T12:15:00.000Z",
      time_zone: "Europe/Berlin",
    });
    deps.clock.advance(26 * 60_000);
    listed = (await (await admin.request(groupsUrl())).json()) as typeof listed;
    expect(listed.source_groups[0]?.freshness).toMatchObject({ state: "overdue", overdue_seconds: 60 });

    // The page shows it; clearing the field on the form restores the default grace.
    const page = await (await admin.request(`/hosts/${hostId}/sources`)).text();
    expect(page).toContain('data-testid="freshness-etc" data-state="overdue">overdue<');
    expect(page).toContain("schedules read in Europe/Berlin");
    expect(page).toContain("grace 600 s after the run was due");
    expect(page).toContain(
      "The grace counts from the time the schedule's run was due, not from the last snapshot",
    );
    const saved = await admin.form(`/hosts/${hostId}/source-groups/${group.id}`, {
      _csrf: csrfFrom(page),
      name: "etc",
      includes: "/etc",
      grace_seconds: "",
    });
    expect(saved.status).toBe(303);
    listed = (await (await admin.request(groupsUrl())).json()) as typeof listed;
    expect(listed.source_groups[0]).toMatchObject({
      grace_seconds: null,
      freshness: { state: "due", deadline: "2026-11-21T13:15:00.000Z" },
    });
  });
});

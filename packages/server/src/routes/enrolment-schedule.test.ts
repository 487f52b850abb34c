/**
 * Issue 35.2: a host enrolled with a token gets its initial paths in a scheduled group with
 * retention (the default, or what the token says), so a fresh fleet is protected, not just listed;
 * "no schedule" is an explicit choice.
 */
import { encodePublicKey, generateSigningKeyPair } from "@fleetback/crypto";
import { scheduleSourceGroups, schedules, sourceGroups } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { loadScheduleSet } from "../hosts/host-push.js";
import { enrolmentAppPerTest, HOST_INFO } from "../testing/enrolment-app.js";
import { csrfFrom } from "../testing/http.js";

const REPOSITORY = { url: "rest:http://127.0.0.1:8000/web-01/", password: "Canary-Repo-Pw-1" };

const app = enrolmentAppPerTest();

async function enrolWith(body: Record<string, unknown>): Promise<string> {
  const minted = await app.operator.json("POST", "/api/enrollment-tokens", {
    repository: REPOSITORY,
    initial_paths: ["/etc"],
    ...body,
  });
  expect(minted.status).toBe(201);
  const { token } = (await minted.json()) as { token: string };
  const res = await app.agent.json("POST", "/api/agents/enroll", { token, ...HOST_INFO });
  expect(res.status).toBe(201);
  return ((await res.json()) as { host_id: string }).host_id;
}

async function scheduleOf(hostId: string) {
  const [group] = await app.deps.db.select().from(sourceGroups).where(eq(sourceGroups.hostId, hostId));
  const rows = await app.deps.db
    .select({ cron: schedules.cron, enabled: schedules.enabled, groupId: scheduleSourceGroups.sourceGroupId })
    .from(schedules)
    .innerJoin(scheduleSourceGroups, eq(scheduleSourceGroups.scheduleId, schedules.id))
    .where(eq(schedules.hostId, hostId));
  return { group, rows };
}

async function protectionOf(hostId: string): Promise<string | undefined> {
  const body = (await (await app.operator.request("/api/hosts")).json()) as {
    hosts: Array<{ id: string; protection: string }>;
  };
  return body.hosts.find((host) => host.id === hostId)?.protection;
}

describe("the initial group's schedule and retention", () => {
  it("is by default daily at a drawn night-time hour, keeping 7 daily, 4 weekly and 6 monthly", async () => {
    const hostId = await enrolWith({});
    const { group, rows } = await scheduleOf(hostId);
    expect(group?.retentionPolicy).toEqual({ daily: 7, weekly: 4, monthly: 6 });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ enabled: true, groupId: group?.id });
    expect(rows[0]?.cron).toMatch(/^([0-9]|[1-5][0-9]) [1-4] \* \* \*$/);
    // The agent's first schedule.set (sent with its hello) carries it.
    const set = await loadScheduleSet(app.deps.db, hostId);
    expect(set?.version).toBe(1);
    expect(set?.schedules.map((s) => [s.cron, s.source_groups])).toEqual([[rows[0]?.cron, [group?.id]]]);
    // Scheduled but not yet backed up: never backed up, not "no schedule", never "fresh".
    expect(await protectionOf(hostId)).toBe("never");
  });

  it("is what the token says, and the token list shows it", async () => {
    const initial = { cron: "30 22 * * 1-5", retention: { daily: 3, within: "2m" } };
    const minted = await app.operator.json("POST", "/api/enrollment-tokens", {
      repository: REPOSITORY,
      initial_paths: ["/etc"],
      initial_schedule: initial,
    });
    const listed = (await (await app.operator.request("/api/enrollment-tokens")).json()) as {
      enrollment_tokens: Array<{ initial_schedule: unknown }>;
    };
    expect(listed.enrollment_tokens.map((t) => t.initial_schedule)).toEqual([initial]);
    const { token } = (await minted.json()) as { token: string };
    const res = await app.agent.json("POST", "/api/agents/enroll", { token, ...HOST_INFO });
    const hostId = ((await res.json()) as { host_id: string }).host_id;
    const { group, rows } = await scheduleOf(hostId);
    expect(group?.retentionPolicy).toEqual(initial.retention);
    expect(rows.map((row) => row.cron)).toEqual(["30 22 * * 1-5"]);
  });

  it("is none only when the token says so, and the host is then shown unscheduled", async () => {
    const hostId = await enrolWith({ initial_schedule: null });
    const { group, rows } = await scheduleOf(hostId);
    expect(group?.retentionPolicy).toEqual({});
    expect(rows).toEqual([]);
    expect(await protectionOf(hostId)).toBe("unscheduled");
  });

  it("refuses a bad cron or retention key, naming the field", async () => {
    const badCron = await app.operator.json("POST", "/api/enrollment-tokens", {
      initial_paths: ["/etc"],
      initial_schedule: { cron: "every night", retention: {} },
    });
    expect(badCron.status).toBe(400);
    expect(await badCron.json()).toMatchObject({
      message: expect.stringMatching(/^initial_schedule\.cron: /),
    });
    const badKey = await app.operator.json("POST", "/api/enrollment-tokens", {
      initial_paths: ["/etc"],
      initial_schedule: { cron: "0 3 * * *", retention: { keep_daily: 7 } },
    });
    expect(badKey.status).toBe(400);
    expect(await badKey.json()).toMatchObject({ message: "keep_daily: is not a known field" });
  });

  it("is shown on the token form, editable, and 'no schedule' is a box to tick", async () => {
    const page = await (await app.operator.request("/enroll")).text();
    const cron = /name="initial_cron" value="([^"]+)"/.exec(page)?.[1];
    expect(cron).toMatch(/^([0-9]|[1-5][0-9]) [1-4] \* \* \*$/);
    expect(page).toMatch(/name="keep_daily" type="number" min="0" value="7"/);
    expect(page).toMatch(/name="keep_weekly" type="number" min="0" value="4"/);
    expect(page).toMatch(/name="keep_monthly" type="number" min="0" value="6"/);
    expect(page).toContain('name="no_schedule" value="on"');
    const csrf = csrfFrom(page);
    const fields = { _csrf: csrf, initial_paths: "/etc", keep_weekly: "2", keep_monthly: "" };
    expect(
      (await app.operator.form("/enroll", { ...fields, initial_cron: "15 23 * * *", keep_daily: "5" }))
        .status,
    ).toBe(200);
    expect(
      (await app.operator.form("/enroll", { ...fields, initial_cron: "15 23 * * *", no_schedule: "on" }))
        .status,
    ).toBe(200);
    const listed = (await (await app.operator.request("/api/enrollment-tokens")).json()) as {
      enrollment_tokens: Array<{ initial_schedule: unknown }>;
    };
    const listedPage = await (await app.operator.request("/enroll")).text();
    expect(listedPage).toContain(
      '<small data-testid="token-schedule">schedule <code>15 23 * * *</code>, keep daily 5, keep weekly 2</small>',
    );
    expect(listedPage).toContain('<small data-testid="token-schedule">no schedule</small>');
    const schedulesListed = listed.enrollment_tokens.map((t) => t.initial_schedule);
    expect(schedulesListed).toHaveLength(2);
    expect(schedulesListed).toEqual(
      expect.arrayContaining([null, { cron: "15 23 * * *", retention: { daily: 5, weekly: 2 } }]),
    );
  });
});

describe("the API approve of an announced host", () => {
  async function announce(): Promise<string> {
    const publicKey = encodePublicKey(generateSigningKeyPair().publicKey);
    const res = await app.agent.json("POST", "/api/agents/announce", { ...HOST_INFO, public_key: publicKey });
    expect(res.status).toBe(201);
    return ((await res.json()) as { pending_id: string }).pending_id;
  }
  async function approve(pendingId: string, body?: Record<string, unknown>) {
    return app.operator.json("POST", `/api/pending-hosts/${pendingId}/approve`, body);
  }
  async function approvedHost(body?: Record<string, unknown>): Promise<string> {
    const res = await approve(await announce(), body);
    expect(res.status).toBe(200);
    return ((await res.json()) as { host_id: string }).host_id;
  }

  it("gives the first group the schedule and retention it names", async () => {
    const initial = { cron: "45 2 * * *", retention: { daily: 2, weekly: 1 } };
    const hostId = await approvedHost({ initial_paths: ["/srv"], initial_schedule: initial });
    const { group, rows } = await scheduleOf(hostId);
    expect(group?.includes).toEqual(["/srv"]);
    expect(group?.retentionPolicy).toEqual(initial.retention);
    expect(rows).toEqual([{ cron: "45 2 * * *", enabled: true, groupId: group?.id }]);
    expect((await loadScheduleSet(app.deps.db, hostId))?.version).toBe(1);
  });

  it("defaults like the page: daily at a drawn night-time hour, keeping 7, 4 and 6", async () => {
    const hostId = await approvedHost({ initial_paths: ["/etc"] });
    const { group, rows } = await scheduleOf(hostId);
    expect(group?.retentionPolicy).toEqual({ daily: 7, weekly: 4, monthly: 6 });
    expect(rows.map((row) => row.cron)).toEqual([
      expect.stringMatching(/^([0-9]|[1-5][0-9]) [1-4] \* \* \*$/),
    ]);
  });

  it("makes the group unscheduled when the schedule is null, and no group without paths", async () => {
    const unscheduled = await approvedHost({ initial_paths: ["/etc"], initial_schedule: null });
    const { group, rows } = await scheduleOf(unscheduled);
    expect(group?.includes).toEqual(["/etc"]);
    expect(group?.retentionPolicy).toEqual({});
    expect(rows).toEqual([]);
    expect(await loadScheduleSet(app.deps.db, unscheduled)).toEqual({ version: 0, schedules: [] });
    // An empty body, as before these fields, still approves.
    const bare = await approvedHost();
    expect((await scheduleOf(bare)).group).toBeUndefined();
  });

  it("refuses a bad cron or a relative path naming the field, and leaves the host waiting", async () => {
    const pendingId = await announce();
    const badCron = await approve(pendingId, {
      initial_paths: ["/etc"],
      initial_schedule: { cron: "every night", retention: {} },
    });
    expect(badCron.status).toBe(400);
    expect(await badCron.json()).toMatchObject({
      message: expect.stringMatching(/^initial_schedule\.cron: /),
    });
    const badPath = await approve(pendingId, { initial_paths: ["etc"] });
    expect(badPath.status).toBe(400);
    expect(((await badPath.json()) as { message: string }).message).toMatch(/initial_paths/);
    expect((await approve(pendingId, { initial_paths: ["/etc"] })).status).toBe(200);
  });
});

import { describe, expect, it } from "vitest";
import { createCronTimes } from "./cron-times.js";
import { judgeGroup } from "./freshness.js";

const times = createCronTimes();
const at = (iso: string) => new Date(iso);
const LONG_AGO = at("2026-01-01T00:00:00Z");

function judge(
  now: string,
  input: {
    last: string | null;
    cron?: string | string[];
    zone?: string;
    grace?: number | null;
    since?: string;
  },
) {
  const crons = input.cron === undefined ? ["0 * * * *"] : [input.cron].flat();
  return judgeGroup(
    {
      lastSnapshotAt: input.last === null ? null : at(input.last),
      groupCreatedAt: input.since ? at(input.since) : LONG_AGO,
      graceSeconds: input.grace ?? null,
      schedules: crons.map((cron) => ({ cron, changedAt: input.since ? at(input.since) : LONG_AGO })),
      timeZone: input.zone ?? "UTC",
    },
    at(now),
    times,
  );
}

describe("freshness rules", () => {
  it("goes fresh → due → overdue, and the grace defaults to an hour after the due time", () => {
    const last = "2026-11-21T10:05:00Z";
    expect(judge("2026-11-21T10:30:00Z", { last })).toMatchObject({
      state: "fresh",
      dueAt: at("2026-11-21T11:00:00Z"),
      deadline: at("2026-11-21T12:00:00Z"),
      nextFireAt: at("2026-11-21T11:00:00Z"),
      overdueSeconds: 0,
    });
    expect(judge("2026-11-21T11:00:00Z", { last }).state).toBe("due");
    expect(judge("2026-11-21T11:59:59Z", { last }).state).toBe("due");
    expect(judge("2026-11-21T12:00:00Z", { last })).toMatchObject({ state: "overdue", overdueSeconds: 0 });
    expect(judge("2026-11-21T13:05:30Z", { last })).toMatchObject({ state: "overdue", overdueSeconds: 3930 });
    // A newer snapshot makes it fresh again.
    expect(judge("2026-11-21T13:05:30Z", { last: "2026-11-21T13:01:00Z" }).state).toBe("fresh");
  });

  it("follows the calendar: a weekday schedule is not overdue over the weekend", () => {
    // Friday 09:05 snapshot, Mon–Fri 09:00 schedule: the next fire is Monday, 72 h after Friday's.
    const last = "2026-11-20T09:05:00Z";
    const cron = "0 9 * * 1-5";
    expect(judge("2026-11-22T20:00:00Z", { last, cron }).state).toBe("fresh");
    expect(judge("2026-11-23T09:30:00Z", { last, cron })).toMatchObject({
      state: "due",
      deadline: at("2026-11-23T10:00:00Z"),
    });
    expect(judge("2026-11-23T10:00:00Z", { last, cron }).state).toBe("overdue");
  });

  it("reads the schedule in the agent's zone, across a daylight-saving change", () => {
    // New York leaves daylight saving on 2026-11-01: 09:00 is 13:00Z before, 14:00Z after.
    const last = "2026-10-31T13:05:00Z";
    const cron = "0 9 * * *";
    const zone = "America/New_York";
    expect(judge("2026-11-01T13:30:00Z", { last, cron, zone })).toMatchObject({
      state: "fresh",
      dueAt: at("2026-11-01T14:00:00Z"),
      // 09:00 in New York after the change, plus the hour of grace.
      deadline: at("2026-11-01T15:00:00Z"),
    });
    // Read in UTC instead, 09:00 would already have passed.
    expect(judge("2026-11-01T13:30:00Z", { last, cron, zone: "UTC" })).toMatchObject({
      state: "overdue",
      dueAt: at("2026-11-01T09:00:00Z"),
    });
    expect(judge("2026-11-01T14:30:00Z", { last, cron, zone }).state).toBe("due");
    expect(judge("2026-11-01T14:59:59Z", { last, cron, zone }).state).toBe("due");
    expect(judge("2026-11-01T15:00:00Z", { last, cron, zone }).state).toBe("overdue");
    // Spring forward in Berlin: 02:30 does not exist on 2026-03-29; the run happens at 03:30 CEST.
    expect(
      judge("2026-03-29T01:00:00Z", {
        last: "2026-03-28T01:35:00Z",
        cron: "30 2 * * *",
        zone: "Europe/Berlin",
      }),
    ).toMatchObject({ state: "fresh", dueAt: at("2026-03-29T01:30:00Z") });
  });

  it("counts the group's own grace from the due time, not from the last snapshot", () => {
    const last = "2026-11-21T10:05:00Z";
    expect(judge("2026-11-21T10:20:00Z", { last, grace: 600 }).state).toBe("fresh");
    expect(judge("2026-11-21T11:05:00Z", { last, grace: 600 })).toMatchObject({
      state: "due",
      deadline: at("2026-11-21T11:10:00Z"),
    });
    expect(judge("2026-11-21T11:15:00Z", { last, grace: 600 })).toMatchObject({
      state: "overdue",
      overdueSeconds: 300,
    });
  });

  it("calls a group with no snapshot yet never backed up, never fresh, until its first deadline", () => {
    const since = "2026-11-21T10:30:00Z";
    expect(judge("2026-11-21T10:45:00Z", { last: null, since })).toMatchObject({
      state: "never",
      dueAt: at("2026-11-21T11:00:00Z"),
      deadline: at("2026-11-21T12:00:00Z"),
      overdueSeconds: 0,
    });
    // Past its first due time it is still only "never": the run may be under way.
    expect(judge("2026-11-21T11:10:00Z", { last: null, since }).state).toBe("never");
    expect(judge("2026-11-21T11:59:59Z", { last: null, since }).state).toBe("never");
    // From the first deadline on, judged from when it became scheduled, it is overdue like any.
    expect(judge("2026-11-21T12:00:00Z", { last: null, since }).state).toBe("overdue");
    expect(judge("2026-11-21T12:30:00Z", { last: null, since })).toMatchObject({
      state: "overdue",
      deadline: at("2026-11-21T12:00:00Z"),
      overdueSeconds: 1800,
    });
    // Its first snapshot makes it fresh.
    expect(judge("2026-11-21T11:30:00Z", { last: "2026-11-21T11:02:00Z", since }).state).toBe("fresh");
  });

  it("takes the earliest due time of several schedules", () => {
    const last = "2026-11-21T10:05:00Z";
    const verdict = judge("2026-11-21T10:10:00Z", { last, cron: ["0 3 * * *", "30 */2 * * *"] });
    expect(verdict).toMatchObject({
      dueAt: at("2026-11-21T10:30:00Z"),
      deadline: at("2026-11-21T11:30:00Z"),
    });
  });

  it("is unscheduled without a schedule, or when no expression fires again", () => {
    expect(judge("2026-11-21T10:10:00Z", { last: null, cron: [] })).toMatchObject({
      state: "unscheduled",
      deadline: null,
    });
    expect(judge("2026-11-21T10:10:00Z", { last: null, cron: "0 0 30 2 *" }).state).toBe("unscheduled");
  });
});

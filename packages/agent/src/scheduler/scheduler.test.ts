import type { ScheduleEntry, ScheduleFire } from "@fleetback/protocol";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../testing/memory-logger.js";
import { parseCron } from "./cron.js";
import { createScheduler, type SchedulerOptions } from "./scheduler.js";

const A = "01HSCHEDA00000000000000000";
const B = "01HSCHEDB00000000000000000";
const GROUP = "01HGR0VP000000000000000000";

function entry(id: string, cron: string, enabled = true): ScheduleEntry {
  return { id, cron, enabled, source_groups: [GROUP] };
}

function setup(overrides: Partial<SchedulerOptions> = {}) {
  const timers = createManualTimers(new Date("2026-01-01T00:00:00Z"));
  const log = createMemoryLogger();
  const fired: ScheduleFire[] = [];
  const acks: number[] = [];
  let connected = true;
  const scheduler = createScheduler({
    timers,
    clock: timers.clock,
    log,
    timeZone: "UTC",
    fire: (payload) => {
      if (connected) {
        fired.push(payload);
      }
      return connected;
    },
    ack: (version) => acks.push(version),
    ...overrides,
  });
  return {
    timers,
    log,
    fired,
    acks,
    scheduler,
    setConnected: (value: boolean) => {
      connected = value;
    },
  };
}

describe("parseCron", () => {
  it("accepts 5 fields and 6 with seconds, and refuses other forms", () => {
    expect(parseCron("*/5 * * * *").ok).toBe(true);
    expect(parseCron("30 */10 * * * *").ok).toBe(true);
    expect(parseCron("* * * *").ok).toBe(false);
    expect(parseCron("* * * * * * *").ok).toBe(false);
    expect(parseCron("@daily").ok).toBe(false);
    expect(parseCron("61 * * * *").ok).toBe(false);
    expect(parseCron("bogus x y z w").ok).toBe(false);
  });

  it("evaluates in the given time zone", () => {
    const parsed = parseCron("0 3 * * *", "Europe/Berlin");
    expect(parsed.ok && parsed.next(new Date("2026-01-01T00:00:00Z"))?.toISOString()).toBe(
      "2026-01-01T02:00:00.000Z",
    );
  });
});

describe("scheduler", () => {
  it("fires at each tick with the tick's time and acks the applied version", async () => {
    const t = setup();
    await t.scheduler.apply({ version: 7, schedules: [entry(A, "*/5 * * * *")] });
    expect(t.acks).toEqual([7]);
    t.timers.advance(4 * 60_000);
    expect(t.fired).toEqual([]);
    t.timers.advance(60_000);
    t.timers.advance(5 * 60_000);
    expect(t.fired).toEqual([
      { schedule_id: A, scheduled_at: "2026-01-01T00:05:00.000Z" },
      { schedule_id: A, scheduled_at: "2026-01-01T00:10:00.000Z" },
    ]);
  });

  it("supports 6-field cron with seconds", async () => {
    const t = setup();
    await t.scheduler.apply({ version: 1, schedules: [entry(A, "*/20 * * * * *")] });
    t.timers.advance(60_000);
    expect(t.fired.map((fire) => fire.scheduled_at)).toEqual([
      "2026-01-01T00:00:20.000Z",
      "2026-01-01T00:00:40.000Z",
      "2026-01-01T00:01:00.000Z",
    ]);
  });

  it("replaces all previous state on each schedule.set", async () => {
    const t = setup();
    await t.scheduler.apply({ version: 1, schedules: [entry(A, "* * * * *")] });
    await t.scheduler.apply({ version: 2, schedules: [entry(B, "*/2 * * * *")] });
    expect(t.scheduler.armed()).toEqual([B]);
    t.timers.advance(4 * 60_000);
    expect(t.fired.map((fire) => fire.schedule_id)).toEqual([B, B]);
    await t.scheduler.apply({ version: 3, schedules: [] });
    t.timers.advance(10 * 60_000);
    expect(t.fired).toHaveLength(2);
    expect(t.acks).toEqual([1, 2, 3]);
    expect(t.timers.pendingDelays()).toEqual([]);
  });

  it("skips disabled entries silently and invalid cron with a log line, and still acks", async () => {
    const t = setup();
    await t.scheduler.apply({
      version: 4,
      schedules: [
        entry(A, "* * * * *", false),
        entry(B, "not a cron"),
        entry("01HSCHEDC00000000000000000", "* * * *"),
      ],
    });
    expect(t.scheduler.armed()).toEqual([]);
    expect(t.acks).toEqual([4]);
    const skipped = t.log.entries.filter(
      (e) => e.message === "skipped a schedule with an invalid cron expression",
    );
    expect(skipped.map((e) => e.fields.schedule_id)).toEqual([B, "01HSCHEDC00000000000000000"]);
    t.timers.advance(60 * 60_000);
    expect(t.fired).toEqual([]);
  });

  it("skips a tick while disconnected, logs it, and does not queue it", async () => {
    const t = setup();
    await t.scheduler.apply({ version: 1, schedules: [entry(A, "* * * * *")] });
    t.setConnected(false);
    t.timers.advance(60_000);
    expect(t.fired).toEqual([]);
    expect(
      t.log.entries.some(
        (e) => e.message === "schedule tick while not connected: sent once the connection is back",
      ),
    ).toBe(true);
    t.setConnected(true);
    t.timers.advance(60_000);
    expect(t.fired).toEqual([{ schedule_id: A, scheduled_at: "2026-01-01T00:02:00.000Z" }]);
  });

  it("waits for an in-flight firing before applying a new set", async () => {
    const order: string[] = [];
    let release: (() => void) | undefined;
    const t = setup({
      fire: (payload) => {
        order.push(`fire ${payload.scheduled_at}`);
        return new Promise<boolean>((resolve) => {
          release = () => {
            order.push("fire sent");
            resolve(true);
          };
        });
      },
      ack: (version) => order.push(`ack ${version}`),
    });
    await t.scheduler.apply({ version: 1, schedules: [entry(A, "* * * * *")] });
    t.timers.advance(60_000);
    const applied = t.scheduler.apply({ version: 2, schedules: [] });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(["ack 1", "fire 2026-01-01T00:01:00.000Z"]);
    release?.();
    await applied;
    expect(order).toEqual(["ack 1", "fire 2026-01-01T00:01:00.000Z", "fire sent", "ack 2"]);
  });

  it("re-arms long waits in bounded steps and fires a yearly schedule on time", async () => {
    const t = setup();
    await t.scheduler.apply({ version: 1, schedules: [entry(A, "0 0 1 6 *")] });
    expect(Math.max(...t.timers.requestedDelays)).toBeLessThanOrEqual(60 * 60 * 1000);
    t.timers.advance(200 * 24 * 60 * 60_000);
    expect(t.fired).toEqual([{ schedule_id: A, scheduled_at: "2026-06-01T00:00:00.000Z" }]);
  });

  it("stops every timer", async () => {
    const t = setup();
    await t.scheduler.apply({ version: 1, schedules: [entry(A, "* * * * *"), entry(B, "* * * * *")] });
    t.scheduler.stop();
    t.timers.advance(10 * 60_000);
    expect(t.fired).toEqual([]);
  });
});

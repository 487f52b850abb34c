import { describe, expect, it } from "vitest";
import { CATCH_UP_WITHIN_MS, createFireLedger, RESEND_WITHIN_MS } from "./fire-ledger.js";

const T0 = new Date("2026-11-23T02:00:00Z");
const at = (ms: number) => new Date(T0.getTime() + ms);
const fire = (schedule: string, ms: number) => ({
  schedule_id: schedule,
  scheduled_at: at(ms).toISOString(),
});

describe("fire ledger", () => {
  it("sends a firing from the last connection again on the next one, once", () => {
    const ledger = createFireLedger();
    ledger.replay(at(0));
    ledger.record(fire("s1", 1_000), true, at(1_000));
    expect(ledger.replay(at(2_000))).toEqual([fire("s1", 1_000)]);
    // Sent again on connection 2; only a third connection soon after would send it once more.
    expect(ledger.replay(at(RESEND_WITHIN_MS + 5_000))).toEqual([]);
  });

  it("catches up a missed tick with the latest firing per schedule, not every tick", () => {
    const ledger = createFireLedger();
    ledger.replay(at(0));
    for (let minute = 1; minute <= 30; minute++) {
      ledger.record(fire("every-minute", minute * 60_000), false, at(minute * 60_000));
    }
    ledger.record(fire("hourly", 10 * 60_000), false, at(10 * 60_000));
    expect(ledger.replay(at(31 * 60_000))).toEqual([
      fire("hourly", 10 * 60_000),
      fire("every-minute", 30 * 60_000),
    ]);
  });

  it("drops a firing missed too long ago, and one of a schedule that is gone", () => {
    const ledger = createFireLedger();
    ledger.replay(at(0));
    ledger.record(fire("old", 0), false, at(0));
    ledger.record(fire("gone", 1_000), false, at(1_000));
    ledger.keepOnly(new Set(["old"]));
    expect(ledger.replay(at(CATCH_UP_WITHIN_MS + 10_000))).toEqual([]);
    expect(ledger.replay(at(CATCH_UP_WITHIN_MS + 20_000))).toEqual([]);
  });
});

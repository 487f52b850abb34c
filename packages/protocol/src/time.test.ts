/**
 * @module time.test
 * The system adapters of the shared time port: a cancelled timer never runs, an interval runs
 * until cancelled. Each test waits on the callbacks themselves, never on the wall clock.
 */
import { describe, expect, it } from "vitest";
import { sleep, systemClock, systemTimers } from "./time.js";

describe("system time port", () => {
  it("runs a timer after its delay and never a cancelled one", async () => {
    const ran: string[] = [];
    const cancel = systemTimers.after(0, () => ran.push("cancelled"));
    cancel();
    cancel();
    // Timers of equal delay run in the order they were set, so once this one ran the cancelled
    // one would have run too.
    await new Promise<void>((resolve) => {
      systemTimers.after(0, () => {
        ran.push("kept");
        resolve();
      });
    });
    expect(ran).toEqual(["kept"]);
  });

  it("repeats an interval until it is cancelled, and unref'd timers still run", async () => {
    let count = 0;
    await new Promise<void>((resolve) => {
      const cancel = systemTimers.every(
        1,
        () => {
          count += 1;
          if (count === 3) {
            cancel();
            resolve();
          }
        },
        { unref: false },
      );
    });
    await sleep(
      {
        after: (ms, callback) => systemTimers.after(ms, callback, { unref: true }),
        every: systemTimers.every,
      },
      1,
    );
    expect(count).toBe(3);
  });

  it("reads the wall clock", () => {
    const before = Date.now();
    const now = systemClock.now().getTime();
    expect(now).toBeGreaterThanOrEqual(before);
  });
});

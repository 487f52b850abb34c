import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../log.js";
import { startTicker } from "./ticker.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("startTicker", () => {
  it("ticks every period, never overlapping, survives a failure and waits for a tick in flight on stop", async () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const log = createLogger("debug", { write: (line: string) => lines.push(line) });
    let calls = 0;
    let finish = () => {};
    const tick = vi.fn(async () => {
      calls += 1;
      if (calls === 1) {
        throw new Error("database away");
      }
      await new Promise<void>((resolve) => {
        finish = resolve;
      });
    });
    const ticker = startTicker(tick, 15_000, { name: "test", log });
    await vi.advanceTimersByTimeAsync(15_000);
    expect(lines.some((line) => line.includes("tick failed"))).toBe(true);
    await vi.advanceTimersByTimeAsync(15_000);
    // The second tick hangs: the third period skips instead of starting another.
    await vi.advanceTimersByTimeAsync(15_000);
    expect(tick).toHaveBeenCalledTimes(2);

    let stopped = false;
    const stopping = ticker.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(1);
    expect(stopped).toBe(false);
    finish();
    await stopping;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(tick).toHaveBeenCalledTimes(2);
  });

  it("ticks on the timers it was given and not once after stop", async () => {
    const manual = createManualTimers();
    const log = createLogger("debug", { write: () => {} });
    let calls = 0;
    const ticker = startTicker(
      async () => {
        calls += 1;
      },
      15_000,
      { name: "manual", log, timers: manual },
    );
    manual.advance(14_999);
    expect(calls).toBe(0);
    manual.advance(1);
    expect(calls).toBe(1);
    await ticker.stop();
    expect(manual.pending()).toBe(0);
    manual.advance(60_000);
    expect(calls).toBe(1);
  });
});

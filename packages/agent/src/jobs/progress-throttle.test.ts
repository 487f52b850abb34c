import { encode } from "@fleetback/protocol";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import type { ProgressState } from "./job-types.js";
import { createProgressThrottle } from "./progress-throttle.js";

const state = (files: number): ProgressState => ({ percent_done: 0, files_done: files, bytes_done: 0 });

describe("progress throttle", () => {
  it("sends the first at once, holds the latest within a second and sends it when the second ends", () => {
    const timers = createManualTimers();
    const sent: [number, number][] = [];
    const start = timers.clock.now().getTime();
    const throttle = createProgressThrottle(
      (progress) => sent.push([timers.clock.now().getTime() - start, progress.files_done]),
      timers,
      timers.clock,
    );
    throttle.push(state(1));
    timers.advance(300);
    throttle.push(state(2));
    timers.advance(300);
    throttle.push(state(3));
    expect(sent).toEqual([[0, 1]]);
    timers.advance(400);
    expect(sent).toEqual([
      [0, 1],
      [1000, 3],
    ]);
    timers.advance(5000);
    throttle.push(state(4));
    throttle.flush();
    throttle.flush();
    expect(sent.map(([, files]) => files)).toEqual([1, 3, 4]);
    expect(timers.pendingDelays()).toEqual([]);
  });

  it("produces payloads the protocol accepts, including a clamped ETA", () => {
    expect(() =>
      encode("job.progress", {
        job_id: "01M807SKJ8H7QEZZS1A0ZWSK9T",
        ...state(1),
        eta_seconds: Number.MAX_SAFE_INTEGER,
      }),
    ).not.toThrow();
  });
});

import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import { OUTAGE_0_14, OUTAGE_0_18 } from "../testing/outage-output.js";
import type { RepositoryUnreachable } from "./guard-verdict.js";
import {
  createUnreachableWatch,
  type ProbeAnswer,
  REPOSITORY_UNREACHABLE_MS,
  unreachableAfterFromEnv,
} from "./unreachable-watch.js";

/** Lets the probe's promise settle between manual time steps. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function watchWith(answers: ProbeAnswer[]) {
  const timers = createManualTimers();
  const tripped: RepositoryUnreachable[] = [];
  const probes: AbortSignal[] = [];
  let answered = 0;
  const watch = createUnreachableWatch({
    timers,
    clock: timers.clock,
    afterMs: REPOSITORY_UNREACHABLE_MS,
    probe: async (signal) => {
      probes.push(signal);
      return answers.shift() ?? { answered: false, cause: undefined };
    },
    onAnswered: () => {
      answered += 1;
    },
    onUnreachable: (verdict) => tripped.push(verdict),
  });
  return { watch, timers, tripped, probes, answeredCount: () => answered };
}

describe("createUnreachableWatch", () => {
  it("trips 60 s after the first failure when the repository does not answer the probe either", async () => {
    const { watch, timers, tripped, probes } = watchWith([{ answered: false, cause: "connection refused" }]);
    watch.observe(OUTAGE_0_18.cut);
    timers.advance(30_000);
    // restic 0.18 keeps printing its unchanged status meanwhile: no reset.
    watch.observe(OUTAGE_0_18.status);
    watch.observe(OUTAGE_0_18.refused);
    timers.advance(29_999);
    await settle();
    expect(probes).toHaveLength(0);
    timers.advance(1);
    await settle();
    expect(probes).toHaveLength(1);
    expect(tripped).toEqual([{ cause: "connection refused", silentMs: 60_000, stoppedByAgent: true }]);
    expect(watch.verdict).toEqual(tripped[0]);
  });

  it("trips even when restic prints nothing more, between two of 0.18's long retry pauses", async () => {
    const { watch, timers, tripped } = watchWith([]);
    watch.observe(OUTAGE_0_18.openRefused);
    timers.advance(REPOSITORY_UNREACHABLE_MS);
    await settle();
    expect(tripped).toEqual([{ cause: "connection refused", silentMs: 60_000, stoppedByAgent: true }]);
  });

  it("starts over when the repository answers the probe: restic 0.14 never says its retry succeeded", async () => {
    const { watch, timers, tripped, probes, answeredCount } = watchWith([
      { answered: true },
      { answered: false, cause: "connection refused" },
    ]);
    watch.observe(OUTAGE_0_14.cut);
    timers.advance(REPOSITORY_UNREACHABLE_MS);
    await settle();
    expect(answeredCount()).toBe(1);
    expect(tripped).toEqual([]);
    expect(watch.failingSince).toBeUndefined();
    // Nothing fails any more: no second probe, however long the backup runs.
    timers.advance(10 * REPOSITORY_UNREACHABLE_MS);
    await settle();
    expect(probes).toHaveLength(1);
    // A new outage counts from its own first failure.
    watch.observe(OUTAGE_0_14.refused);
    timers.advance(REPOSITORY_UNREACHABLE_MS);
    await settle();
    expect(tripped).toHaveLength(1);
    expect(tripped[0]?.silentMs).toBe(REPOSITORY_UNREACHABLE_MS);
  });

  it("resets on restic's 'operation successful after N retries'", async () => {
    const { watch, timers, probes } = watchWith([]);
    watch.observe(OUTAGE_0_18.cut);
    timers.advance(50_000);
    watch.observe(OUTAGE_0_18.recovered);
    timers.advance(50_000);
    await settle();
    expect(probes).toHaveLength(0);
    expect(watch.verdict).toBeUndefined();
  });

  it("ignores a probe's answer when restic recovered while it ran", async () => {
    const timers = createManualTimers();
    let release: (answer: ProbeAnswer) => void = () => {};
    const tripped: RepositoryUnreachable[] = [];
    const watch = createUnreachableWatch({
      timers,
      clock: timers.clock,
      afterMs: 1_000,
      probe: () =>
        new Promise((resolve) => {
          release = resolve;
        }),
      onUnreachable: (verdict) => tripped.push(verdict),
    });
    watch.observe(OUTAGE_0_18.refused);
    timers.advance(1_000);
    watch.observe(OUTAGE_0_18.recovered);
    release({ answered: false, cause: "connection refused" });
    await settle();
    expect(tripped).toEqual([]);
  });

  it("stops its timer and aborts a running probe when the process ends", async () => {
    const timers = createManualTimers();
    let probeSignal: AbortSignal | undefined;
    const watch = createUnreachableWatch({
      timers,
      clock: timers.clock,
      afterMs: 1_000,
      probe: (signal) => {
        probeSignal = signal;
        return new Promise(() => {});
      },
      onUnreachable: () => {
        throw new Error("must not trip");
      },
    });
    watch.observe(OUTAGE_0_18.refused);
    timers.advance(1_000);
    watch.stop();
    expect(probeSignal?.aborted).toBe(true);
    expect(timers.pendingDelays()).toEqual([]);
  });
});

describe("unreachableAfterFromEnv", () => {
  it("reads the job timeouts' format and keeps the default for nonsense", () => {
    expect(unreachableAfterFromEnv({})).toEqual({ ms: 60_000 });
    expect(unreachableAfterFromEnv({ FLEETBACK_REPOSITORY_UNREACHABLE_AFTER: "10s" })).toEqual({
      ms: 10_000,
    });
    expect(unreachableAfterFromEnv({ FLEETBACK_REPOSITORY_UNREACHABLE_AFTER: "off" })).toEqual({ ms: null });
    expect(unreachableAfterFromEnv({ FLEETBACK_REPOSITORY_UNREACHABLE_AFTER: "soon" })).toEqual({
      ms: 60_000,
      problem:
        'FLEETBACK_REPOSITORY_UNREACHABLE_AFTER="soon" is not a duration such as 60s, 5m or off; using 1 min',
    });
  });
});

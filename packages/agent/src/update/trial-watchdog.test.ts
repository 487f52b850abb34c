import { UPDATE_TRIAL_MS } from "@fleetback/protocol";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../testing/memory-logger.js";
import { waitUntil } from "../testing/processes.js";
import { createWindowsFs } from "../testing/windows-fs.js";
import { commitTrial } from "./boot-decision.js";
import type { BootRecord } from "./boot-record.js";
import { createPosixPlatform } from "./posix-platform.js";
import { startTrialWatchdog, updateTrialFromEnv } from "./trial-watchdog.js";

const active = {
  version: "0.1.0",
  file: "agent-0.1.0.mjs",
  sha256: "11".repeat(32),
  kind: "bundle" as const,
};

async function setUp() {
  const timers = createManualTimers();
  const posix = createPosixPlatform({ dir: "/state/update", fs: createWindowsFs() });
  // Every read and write of the boot record, so that "nothing happened" is seen, not hoped for.
  const reads: Array<Awaited<ReturnType<typeof posix.readRecord>>> = [];
  const writes: BootRecord[] = [];
  const platform = {
    readRecord: async () => {
      const read = await posix.readRecord();
      reads.push(read);
      return read;
    },
    writeRecord: (written: BootRecord) => {
      writes.push(written);
      return posix.writeRecord(written);
    },
  };
  const started = timers.clock.now();
  const record: BootRecord = {
    format: 1,
    active,
    trial: {
      ...active,
      version: "0.2.0",
      file: "agent-0.2.0.mjs",
      staged_at: "x",
      started_at: started.toISOString(),
    },
  };
  await posix.writeRecord(record);
  let expired = 0;
  const cancel = startTrialWatchdog({
    platform,
    version: "0.2.0",
    deadline: new Date(started.getTime() + UPDATE_TRIAL_MS),
    timers,
    clock: timers.clock,
    log: createMemoryLogger(),
    onExpired: () => expired++,
  });
  return { timers, platform: posix, record, cancel, expired: () => expired, reads, writes };
}

describe("trial watchdog", () => {
  it("rolls back and ends the trial when it did not commit in time", async () => {
    const { timers, platform, expired, reads } = await setUp();
    timers.advance(UPDATE_TRIAL_MS - 1);
    // Its timer has not run, so the record was not even read: nothing can have happened.
    expect(timers.pendingDelays()).toEqual([1]);
    expect(reads).toEqual([]);
    expect(expired()).toBe(0);
    timers.advance(1);
    await waitUntil(() => expired() === 1);
    const read = await platform.readRecord();
    expect(read.ok && read.record).toEqual({
      format: 1,
      active,
      failed: {
        version: "0.2.0",
        sha256: active.sha256,
        reason: "version 0.2.0 did not connect to the server within 120 s",
        at: "2026-01-01T00:02:00.000Z",
        reported: false,
      },
    });
  });

  it("never fires after a commit, even if its timer was not cancelled", async () => {
    const { timers, platform, record, expired, reads, writes } = await setUp();
    await platform.writeRecord(commitTrial(record, "0.2.0") ?? record);
    timers.advance(UPDATE_TRIAL_MS);
    // It read the committed record; a rollback would have been written as soon as the read returned.
    await waitUntil(() => reads.length === 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([]);
    expect(expired()).toBe(0);
    const read = await platform.readRecord();
    expect(read.ok && read.record?.active?.version).toBe("0.2.0");
  });

  it("does nothing once cancelled", async () => {
    const { timers, cancel, expired, reads } = await setUp();
    cancel();
    timers.advance(UPDATE_TRIAL_MS * 2);
    // A fired timer reads the record at once: not read means not fired.
    expect(reads).toEqual([]);
    expect(expired()).toBe(0);
    expect(timers.pendingDelays()).toEqual([]);
  });
});

describe("updateTrialFromEnv", () => {
  it("reads the job timeouts' format and keeps the default for nonsense and for off", () => {
    expect(updateTrialFromEnv({})).toEqual({ ms: UPDATE_TRIAL_MS });
    expect(updateTrialFromEnv({ FLEETBACK_UPDATE_TRIAL: " " })).toEqual({ ms: UPDATE_TRIAL_MS });
    expect(updateTrialFromEnv({ FLEETBACK_UPDATE_TRIAL: "5m" })).toEqual({ ms: 300_000 });
    expect(updateTrialFromEnv({ FLEETBACK_UPDATE_TRIAL: "3" })).toEqual({ ms: 3_000 });
    for (const text of ["soon", "off", "0", "-5s"]) {
      expect(updateTrialFromEnv({ FLEETBACK_UPDATE_TRIAL: text })).toEqual({
        ms: UPDATE_TRIAL_MS,
        problem: `FLEETBACK_UPDATE_TRIAL="${text}" is not a duration such as 120s or 5m; using 2 min`,
      });
    }
  });
});

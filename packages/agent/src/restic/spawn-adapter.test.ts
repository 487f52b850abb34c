import { readFile } from "node:fs/promises";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import { createSleepingRestic, sleepingPids } from "../testing/fake-restic.js";
import { isRunning, waitUntil } from "../testing/processes.js";
import type { ProcessSpec } from "./runner.js";
import { createSpawnRunner } from "./spawn-adapter.js";

function spec(command: string, overrides: Partial<ProcessSpec> = {}): ProcessSpec {
  return { command, args: ["init"], env: { PATH: process.env.PATH }, onLine: () => {}, ...overrides };
}

describe("createSpawnRunner", () => {
  it("kills the whole process group on cancel", async () => {
    const fake = await createSleepingRestic();
    const controller = new AbortController();
    const running = createSpawnRunner({ killGraceMs: 2_000 }).run(
      spec(fake.path, { signal: controller.signal }),
    );
    const pids = await sleepingPids(fake.pidFile);
    expect(pids.every(isRunning)).toBe(true);
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ kind: "exited", cancelled: true, exitCode: null, signal: "SIGINT" });
    await waitUntil(() => !pids.some(isRunning));
  });

  it("stops with SIGINT first, the one signal restic before 0.17 removes its lock on", async () => {
    const fake = await createSleepingRestic({ cleanupOnInt: true });
    const controller = new AbortController();
    const running = createSpawnRunner({ killGraceMs: 5_000 }).run(
      spec(fake.path, { signal: controller.signal }),
    );
    const pids = await sleepingPids(fake.pidFile);
    controller.abort();
    expect(await running).toMatchObject({ kind: "exited", cancelled: true, exitCode: 130 });
    expect((await readFile(fake.cleanedFile, "utf8")).trim()).toBe("cleaned");
    await waitUntil(() => !pids.some(isRunning));
  });

  it("escalates to SIGKILL when the group ignores SIGINT and SIGTERM", async () => {
    const fake = await createSleepingRestic({ ignoreStops: true });
    const controller = new AbortController();
    const running = createSpawnRunner({ killGraceMs: 200 }).run(
      spec(fake.path, { signal: controller.signal }),
    );
    const pids = await sleepingPids(fake.pidFile);
    controller.abort();
    expect(await running).toMatchObject({ kind: "exited", cancelled: true, signal: "SIGKILL" });
    await waitUntil(() => !pids.some(isRunning));
  });

  it("runs its timeout and kill escalation on the timers it was given", async () => {
    const fake = await createSleepingRestic({ ignoreStops: true });
    const manual = createManualTimers();
    const running = createSpawnRunner({ killGraceMs: 10_000, timers: manual }).run(
      spec(fake.path, { timeoutMs: 60_000 }),
    );
    const pids = await sleepingPids(fake.pidFile);
    expect(manual.pendingDelays()).toEqual([60_000]);
    // SIGINT, then SIGTERM half a grace later: both ignored, so the group is still there.
    manual.advance(65_000);
    expect(manual.pendingDelays()).toEqual([5_000]);
    expect(pids.every(isRunning)).toBe(true);
    manual.advance(5_000);
    expect(await running).toMatchObject({ kind: "exited", timedOut: true, signal: "SIGKILL" });
    await waitUntil(() => !pids.some(isRunning));
  });

  it("kills the group on timeout and says so", async () => {
    const fake = await createSleepingRestic();
    // The timeout fires when the test says, after the group wrote its pids: with a real 300 ms a
    // loaded machine ended restic before it had written them.
    const manual = createManualTimers();
    const running = createSpawnRunner({ timers: manual }).run(spec(fake.path, { timeoutMs: 300 }));
    const pids = await sleepingPids(fake.pidFile);
    expect(pids.every(isRunning)).toBe(true);
    manual.advance(300);
    expect(await running).toMatchObject({ kind: "exited", timedOut: true, cancelled: false });
    await waitUntil(() => !pids.some(isRunning));
  });

  it("reports a missing binary", async () => {
    const result = await createSpawnRunner().run(spec("/nonexistent/restic"));
    expect(result).toMatchObject({ kind: "spawn_failed", missing: true });
  });

  it("streams stdout and stderr line by line with the exit code", async () => {
    const lines: string[] = [];
    const result = await createSpawnRunner().run({
      command: "/bin/sh",
      args: ["-c", "printf 'a\\nb'; printf 'err\\n' >&2; exit 3"],
      env: {},
      onLine: (line) => lines.push(`${line.stream}:${line.text}`),
    });
    expect(result).toMatchObject({ kind: "exited", exitCode: 3 });
    expect(lines.sort()).toEqual(["stderr:err", "stdout:a", "stdout:b"]);
  });
});

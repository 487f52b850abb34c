import { readFile } from "node:fs/promises";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import { createSleepingRestic, sleepingPids } from "../testing/fake-restic.js";
import { isRunning, waitUntil } from "../testing/processes.js";
import type { ProcessSpec } from "./runner.js";
import { createSpawnRunner, type SpawnRunnerOptions } from "./spawn-adapter.js";

function spec(command: string, overrides: Partial<ProcessSpec> = {}): ProcessSpec {
  return { command, args: ["init"], env: { PATH: process.env.PATH }, onLine: () => {}, ...overrides };
}

/**
 * A sleeping stand-in restic (testing/fake-restic.ts) run by the spawn runner under an abort
 * signal, once it and its child both run; `gone` waits until both have ended.
 */
async function runSleeping(
  sleeping: Parameters<typeof createSleepingRestic>[0],
  options: SpawnRunnerOptions,
  overrides: Partial<ProcessSpec> = {},
) {
  const fake = await createSleepingRestic(sleeping);
  const controller = new AbortController();
  const running = createSpawnRunner(options).run(
    spec(fake.path, { signal: controller.signal, ...overrides }),
  );
  const pids = await sleepingPids(fake.pidFile);
  return {
    fake,
    pids,
    running,
    abort: () => controller.abort(),
    gone: () => waitUntil(() => !pids.some(isRunning)),
  };
}

describe("createSpawnRunner", () => {
  it("kills the whole process group on cancel", async () => {
    const run = await runSleeping({}, { killGraceMs: 2_000 });
    expect(run.pids.every(isRunning)).toBe(true);
    run.abort();
    expect(await run.running).toMatchObject({
      kind: "exited",
      cancelled: true,
      exitCode: null,
      signal: "SIGINT",
    });
    await run.gone();
  });

  it("stops with SIGINT first, the one signal restic before 0.17 removes its lock on", async () => {
    const run = await runSleeping({ cleanupOnInt: true }, { killGraceMs: 5_000 });
    run.abort();
    expect(await run.running).toMatchObject({ kind: "exited", cancelled: true, exitCode: 130 });
    expect((await readFile(run.fake.cleanedFile, "utf8")).trim()).toBe("cleaned");
    await run.gone();
  });

  it("escalates to SIGKILL when the group ignores SIGINT and SIGTERM", async () => {
    const run = await runSleeping({ ignoreStops: true }, { killGraceMs: 200 });
    run.abort();
    expect(await run.running).toMatchObject({ kind: "exited", cancelled: true, signal: "SIGKILL" });
    await run.gone();
  });

  it("runs its timeout and kill escalation on the timers it was given", async () => {
    const manual = createManualTimers();
    const run = await runSleeping(
      { ignoreStops: true },
      { killGraceMs: 10_000, timers: manual },
      { timeoutMs: 60_000 },
    );
    expect(manual.pendingDelays()).toEqual([60_000]);
    // SIGINT, then SIGTERM half a grace later: both ignored, so the group is still there.
    manual.advance(65_000);
    expect(manual.pendingDelays()).toEqual([5_000]);
    expect(run.pids.every(isRunning)).toBe(true);
    manual.advance(5_000);
    expect(await run.running).toMatchObject({ kind: "exited", timedOut: true, signal: "SIGKILL" });
    await run.gone();
  });

  it("kills the group on timeout and says so", async () => {
    // The timeout fires when the test says, after the group wrote its pids: with a real 300 ms a
    // loaded machine ended restic before it had written them.
    const manual = createManualTimers();
    const run = await runSleeping({}, { timers: manual }, { timeoutMs: 300 });
    expect(run.pids.every(isRunning)).toBe(true);
    manual.advance(300);
    expect(await run.running).toMatchObject({ kind: "exited", timedOut: true, cancelled: false });
    await run.gone();
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

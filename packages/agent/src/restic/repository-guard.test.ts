import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import { OUTAGE_0_14, OUTAGE_0_18 } from "../testing/outage-output.js";
import { createGuardRecord } from "./guard-record.js";
import { GUARD_NOTICE_PREFIX, guardRepository } from "./repository-guard.js";
import type { Restic, ResticRequest, ResticResult } from "./restic.js";
import type { OutputLine } from "./runner.js";

const repository = { url: "rest:http://127.0.0.1:8000/host-1/", username: "host-1", password: "s3cret" };

/** One restic process as a test plays it: lines, then an exit or waiting for the stop. */
type Script = (request: ResticRequest) => Promise<ResticResult>;

const exited = (exitCode: number | null, cancelled = false): ResticResult => ({
  kind: "exited",
  exitCode,
  signal: null,
  cancelled,
  timedOut: false,
});

function say(request: ResticRequest, stream: OutputLine["stream"], ...lines: readonly string[]): void {
  for (const text of lines) {
    request.onLine({ stream, text });
  }
}

/** Waits for the stop (SIGINT) as restic does, then exits as 0.18 did after it. */
function untilStopped(request: ResticRequest): Promise<ResticResult> {
  return new Promise((resolve) => {
    const stop = () => resolve(exited(1, true));
    if (request.signal?.aborted) {
      stop();
    }
    request.signal?.addEventListener("abort", stop, { once: true });
  });
}

/** Plays the scripts of each subcommand in order; a call without a script fails the test. */
function scriptedRestic(scripts: Record<string, Script[]>) {
  const calls: ResticRequest[] = [];
  const restic: Restic = {
    command: "restic",
    run(request) {
      calls.push(request);
      const script = scripts[request.subcommand]?.shift();
      if (script === undefined) {
        throw new Error(`no script for restic ${request.subcommand}`);
      }
      return script(request);
    },
  };
  return { restic, calls };
}

function setup(scripts: Record<string, Script[]>, afterMs: number | null = 60_000) {
  const timers = createManualTimers();
  const record = createGuardRecord();
  const inner = scriptedRestic(scripts);
  const guarded = guardRepository(inner.restic, {
    timers,
    clock: timers.clock,
    record,
    unreachableAfterMs: afterMs,
  });
  const lines: OutputLine[] = [];
  const run = (subcommand: string, signal?: AbortSignal) =>
    guarded.run({ subcommand, repository, signal, onLine: (line) => lines.push(line) });
  return { timers, record, calls: inner.calls, lines, run };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A process that prints `lines` on `stream` and exits with `exitCode`. */
const printing =
  (stream: OutputLine["stream"], lines: readonly string[], exitCode: number): Script =>
  async (request) => {
    say(request, stream, ...lines);
    return exited(exitCode);
  };
const notices = (lines: OutputLine[]) =>
  lines.filter((line) => line.text.startsWith(GUARD_NOTICE_PREFIX)).map((line) => line.text);

describe("guardRepository: a repository that stops answering", () => {
  it("stops restic after 60 s of failures and a probe without answer, as a failure, not a cancel", async () => {
    const { timers, record, calls, lines, run } = setup({
      backup: [
        async (request) => {
          say(request, "stdout", OUTAGE_0_18.status);
          say(request, "stderr", OUTAGE_0_18.cut, OUTAGE_0_18.refused);
          return untilStopped(request);
        },
      ],
      cat: [
        async (request) => {
          say(request, "stderr", OUTAGE_0_18.openRefused);
          return untilStopped(request);
        },
      ],
    });
    const result = run("backup");
    await settle();
    timers.advance(60_000);
    await settle();
    expect(await result).toEqual(exited(1));
    expect(calls.map((call) => [call.subcommand, ...(call.args ?? [])])).toEqual([
      ["backup"],
      ["cat", "--no-lock", "config"],
    ]);
    expect(calls[1]?.repository).toBe(repository);
    expect(notices(lines)).toEqual([
      `${GUARD_NOTICE_PREFIX}the repository did not answer for 60 s (connection refused); stopping restic`,
    ]);
    expect(record.take()).toEqual({
      unreachable: { cause: "connection refused", silentMs: 60_000, stoppedByAgent: true },
    });
  });

  it("lets restic go on when the repository answers the probe (0.14 never says its retry succeeded)", async () => {
    let finish: () => void = () => {};
    const { timers, record, lines, run } = setup({
      backup: [
        async (request) => {
          say(request, "stderr", OUTAGE_0_14.cut, OUTAGE_0_14.refused);
          await new Promise<void>((resolve) => {
            finish = resolve;
          });
          return request.signal?.aborted ? exited(130, true) : exited(0);
        },
      ],
      cat: [async () => exited(0)],
    });
    const result = run("backup");
    await settle();
    timers.advance(60_000);
    await settle();
    finish();
    expect(await result).toEqual(exited(0));
    expect(notices(lines)).toEqual([
      `${GUARD_NOTICE_PREFIX}restic keeps retrying, but the repository answered a direct request; waiting on`,
    ]);
    expect(record.take()).toBeUndefined();
  });

  it("gives the probe at most 30 s on a network that answers nothing", async () => {
    const { timers, record, run } = setup({
      check: [
        async (request) => {
          say(
            request,
            "stderr",
            "Load(<index/0a1b2c3d4e>, 0, 0) returned error, retrying after 20s: dial tcp 10.0.0.9:8000: i/o timeout",
          );
          return untilStopped(request);
        },
      ],
      cat: [untilStopped],
    });
    const result = run("check");
    await settle();
    timers.advance(60_000);
    await settle();
    timers.advance(30_000);
    await settle();
    expect((await result).kind).toBe("exited");
    expect(record.take()?.unreachable).toEqual({
      cause: "no answer in time",
      silentMs: 90_000,
      stoppedByAgent: true,
    });
  });

  it("says unreachable when restic gave up by itself for a network cause (0.14 at the start)", async () => {
    const { record, calls, run } = setup({
      check: [
        async (request) => {
          say(request, "stderr", OUTAGE_0_14.openRefused, "Is there a repository at the following location?");
          return exited(1);
        },
      ],
    });
    expect(await run("check")).toEqual(exited(1));
    expect(calls).toHaveLength(1);
    expect(record.take()).toEqual({
      unreachable: { cause: "connection refused", silentMs: 0, stoppedByAgent: false },
    });
  });

  it("leaves a cancel a cancel, and records nothing", async () => {
    const { timers, record, run } = setup({
      backup: [
        async (request) => {
          say(request, "stderr", OUTAGE_0_18.refused);
          return untilStopped(request);
        },
      ],
    });
    const cancel = new AbortController();
    const result = run("backup", cancel.signal);
    await settle();
    cancel.abort();
    expect(await result).toEqual(exited(1, true));
    timers.advance(120_000);
    expect(record.take()).toBeUndefined();
  });

  it("watches nothing when turned off", async () => {
    const { timers, record, calls, run } = setup(
      {
        backup: [
          async (request) => {
            say(request, "stderr", OUTAGE_0_18.refused);
            return untilStopped(request);
          },
        ],
      },
      null,
    );
    const cancel = new AbortController();
    const result = run("backup", cancel.signal);
    await settle();
    timers.advance(600_000);
    await settle();
    expect(calls).toHaveLength(1);
    cancel.abort();
    await result;
    expect(record.take()).toBeUndefined();
  });

  it("leaves a run the caller bounds as tightly itself to the caller", async () => {
    const timers = createManualTimers();
    const record = createGuardRecord();
    const inner = scriptedRestic({
      cat: [
        async (request) => {
          say(request, "stderr", OUTAGE_0_18.openRefused);
          return untilStopped(request);
        },
      ],
    });
    const guarded = guardRepository(inner.restic, { timers, clock: timers.clock, record });
    const cancel = new AbortController();
    const result = guarded.run({
      subcommand: "cat",
      args: ["config"],
      repository,
      timeoutMs: 60_000,
      signal: cancel.signal,
      onLine: () => {},
    });
    await settle();
    timers.advance(120_000);
    await settle();
    expect(inner.calls).toHaveLength(1);
    cancel.abort();
    await result;
    expect(record.take()).toBeUndefined();
  });

  it("passes commands without a repository straight through", async () => {
    const timers = createManualTimers();
    const inner = scriptedRestic({ version: [async () => exited(0)] });
    const guarded = guardRepository(inner.restic, { timers, clock: timers.clock });
    expect(await guarded.run({ subcommand: "version", onLine: () => {} })).toEqual(exited(0));
  });
});

describe("guardRepository: a lock left behind", () => {
  const locked =
    (version: typeof OUTAGE_0_18 | typeof OUTAGE_0_14, code: number) => async (request: ResticRequest) => {
      say(request, "stdout", "create exclusive lock for repository");
      say(request, "stderr", ...version.locked);
      return exited(code);
    };

  it("runs restic unlock (never --remove-all) and the command once more: the stale lock is gone", async () => {
    const { record, calls, lines, run } = setup({
      check: [locked(OUTAGE_0_18, 11), printing("stdout", ["no errors were found"], 0)],
      unlock: [printing("stdout", [OUTAGE_0_18.unlocked], 0)],
    });
    expect(await run("check")).toEqual(exited(0));
    expect(calls.map((call) => [call.subcommand, ...(call.args ?? [])])).toEqual([
      ["check"],
      ["unlock"],
      ["check"],
    ]);
    expect(calls[1]?.repository).toBe(repository);
    expect(lines.map((line) => line.text).slice(-3)).toEqual([
      `${GUARD_NOTICE_PREFIX}the repository is locked by PID 17541 on vm, 52s old; running restic unlock, which removes the lock only if restic finds it stale (its process gone from that host, or 30 minutes old), then trying once more`,
      OUTAGE_0_18.unlocked,
      "no errors were found",
    ]);
    expect(record.take()).toBeUndefined();
  });

  it("names the holder when restic unlock left the lock (its holder may still run)", async () => {
    const { record, calls, run } = setup({
      prune: [locked(OUTAGE_0_14, 1), locked(OUTAGE_0_14, 1)],
      unlock: [printing("stdout", [OUTAGE_0_14.unlocked], 0)],
    });
    expect(await run("prune")).toEqual(exited(1));
    expect(calls).toHaveLength(3);
    expect(record.take()).toEqual({
      locked: {
        pid: 17513,
        host: "vm",
        user: "root",
        exclusive: false,
        createdAt: "2026-11-27 18:44:07",
        age: "46s",
        unlockRan: true,
      },
      afterUnlock: { error: OUTAGE_0_14.locked[0] },
    });
  });

  it("keeps the second run's own error when it failed for another reason", async () => {
    const { record, run } = setup({
      forget: [
        locked(OUTAGE_0_18, 11),
        printing("stderr", ["Fatal: unable to remove <snapshot/1344c020a8>"], 1),
      ],
      unlock: [async () => exited(0)],
    });
    await run("forget");
    expect(record.take()).toEqual({
      afterUnlock: { error: "Fatal: unable to remove <snapshot/1344c020a8>" },
    });
  });

  it("never retries unlock itself, and records the holder of a lock it met", async () => {
    const { record, calls, run } = setup({ unlock: [locked(OUTAGE_0_18, 11)] });
    await run("unlock");
    expect(calls).toHaveLength(1);
    expect(record.take()?.locked).toMatchObject({ pid: 17541, unlockRan: false });
  });
});

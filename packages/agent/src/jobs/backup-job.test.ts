import type { CommandRunBackup } from "@fleetback/protocol";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import type { Recording } from "../restic/replay-adapter.js";
import type { ProcessResult, ProcessSpec } from "../restic/runner.js";
import {
  type FixtureVersion,
  fixture,
  JOB_TEST_START,
  type JobTestOptions,
  type JobTestRun,
  recordedLockedError,
  recordedScenario,
  runJobForTest,
  TEST_PASSWORD,
} from "../testing/job-run.js";
import { waitUntil } from "../testing/processes.js";
import type { CatalogRequest } from "../tree/catalog-catch-up.js";
import {
  backupArgs,
  createBackupJob,
  LISTING_PREEMPT_GRACE_MS,
  UNREADABLE_FILES_ERROR,
} from "./backup-job.js";
import { NextJobWaiting } from "./job-types.js";
import { BACKUP_STATS_TIMEOUT_MS } from "./raw-data-stats.js";
import type { RepositoryJobDeps } from "./repository-job.js";

const PASSWORD = TEST_PASSWORD;
const TREE = recordedScenario("0.18.0").tree;

function backupCommand(overrides: Partial<CommandRunBackup> = {}): CommandRunBackup {
  return {
    job_id: "01M807SKJ8H7QEZZS1A0ZWSK9T",
    kind: "backup",
    requires_admin_creds: false,
    includes: [TREE],
    excludes: [],
    tag: "t1",
    ...overrides,
  };
}

interface Ran extends JobTestRun {
  /** How many snapshot reports had gone out when the outcome (job.finished) came back. */
  reportsAtFinish: number;
  /** The snapshots whose browse index the backup asked for, and whether its signal was aborted. */
  prebuilt: { snapshotId: string; aborted: boolean }[];
  /** The file catalogue runs the backup asked for (after its prebuild). */
  catalogued: CatalogRequest[];
}

interface RunOptions
  extends Pick<
    JobTestOptions,
    "msPerLine" | "hostCaps" | "signal" | "realHooks" | "timers" | "onLog" | "abortAfterFinishWith"
  > {
  command?: CommandRunBackup;
  backup: Recording;
  snapshots?: Recording;
  stats?: Recording;
  /** Runs `restic backup` in place of its recording. */
  backupRun?: (spec: ProcessSpec) => Promise<ProcessResult>;
  /** Runs `restic snapshots` in place of its recording. */
  snapshotsRun?: (spec: ProcessSpec) => Promise<ProcessResult>;
  /** Runs `restic stats` in place of its recording. */
  statsRun?: (spec: ProcessSpec) => Promise<ProcessResult>;
  /** Gives the job a prebuildTreeIndex that records its calls (the agent's default). */
  prebuild?: boolean;
  /** What the prebuild resolves to (default: `/index/<snapshot id>`, an index that was built). */
  prebuiltDir?: (snapshotId: string) => string | undefined;
  /** The agent's own directories (default: none). */
  agentDirs?: string[];
}

async function runBackup(options: RunOptions): Promise<Ran> {
  const { command, backup, snapshots, stats, backupRun, snapshotsRun, statsRun, prebuild, ...rest } = options;
  const prebuilt: Ran["prebuilt"] = [];
  const catalogued: Ran["catalogued"] = [];
  const create = (deps: RepositoryJobDeps) =>
    createBackupJob({
      ...deps,
      ...(prebuild
        ? {
            prebuildTreeIndex: async (snapshotId: string, signal: AbortSignal) => {
              prebuilt.push({ snapshotId, aborted: signal.aborted });
              return (options.prebuiltDir ?? ((id) => `/index/${id}`))(snapshotId);
            },
            catalogue: async (request: CatalogRequest) => {
              catalogued.push(request);
            },
          }
        : {}),
      agentDirs: options.agentDirs ?? [],
    });
  const ran = await runJobForTest(create, command ?? backupCommand(), {
    ...rest,
    replay: (subcommand) =>
      subcommand === "stats"
        ? (stats ?? recording("0.18.0", "stats-raw"))
        : subcommand === "snapshots"
          ? (snapshots ?? { stdout: "[]", stderr: "", exitCode: 0 })
          : backup,
    runs: { backup: backupRun, snapshots: snapshotsRun, stats: statsRun },
  });
  return { ...ran, reportsAtFinish: ran.finishedWith.reports, prebuilt, catalogued };
}

/** Ends of a stand-in restic run: stopped by the agent's SIGINT, or done. */
const INTERRUPTED: ProcessResult = {
  kind: "exited",
  exitCode: null,
  signal: "SIGINT",
  cancelled: true,
  timedOut: false,
};
const EXITED_0: ProcessResult = {
  kind: "exited",
  exitCode: 0,
  signal: null,
  cancelled: false,
  timedOut: false,
};

/** The reason the queue stops a job's after-finish work with when another job arrives. */
const nextJobWaiting = () => new NextJobWaiting({ job_id: "01JNEXTJOB0000000000000000", kind: "check" });

const recording = (version: FixtureVersion, name: string) => fixture(version, name);

/** The JSON status lines of a recorded backup, in order. */
function statusLines(recorded: Recording): Record<string, unknown>[] {
  return recorded.stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.message_type === "status");
}

/** The recorded `stats --json --mode raw-data` of 0.18 (sizes differ per recording run). */
function recordedStats(): { total_size: number; total_uncompressed_size: number; compression_ratio: number } {
  const raw = JSON.parse(recording("0.18.0", "stats-raw").stdout);
  expect(raw.total_size).toBeGreaterThan(0);
  return raw;
}

describe("backup argv", () => {
  it("puts caps before the subcommand, per-job caps over host caps, excludes, and paths after --", async () => {
    const ran = await runBackup({
      command: backupCommand({
        includes: ["/etc", "-weird"],
        excludes: ["*.log", "/var/cache"],
        tag: "daily",
        bandwidth_up_kbps: 100,
      }),
      hostCaps: { up: 5, down: 7 },
      backup: { stdout: "", stderr: "", exitCode: 0 },
    });
    const [backup, snapshots] = ran.calls;
    expect(backup?.args).toEqual([
      "--cache-dir",
      "/state/cache",
      "--limit-upload",
      "100",
      "--limit-download",
      "7",
      "--json",
      "backup",
      "--tag",
      "daily",
      "--exclude",
      "*.log",
      "--exclude",
      "/var/cache",
      "--",
      "/etc",
      "-weird",
    ]);
    expect(backup?.env.RESTIC_PASSWORD).toBe(PASSWORD);
    expect(snapshots?.args).toEqual([
      "--cache-dir",
      "/state/cache",
      "--limit-upload",
      "100",
      "--limit-download",
      "7",
      "--json",
      "snapshots",
      "--no-lock",
    ]);
    expect(backupArgs(backupCommand())).toEqual(["--tag", "t1", "--", TREE]);
    // Protocol 11: the host's stable name, as one argument so that no name reads as a flag.
    expect(backupArgs({ ...backupCommand(), host: "-web" })).toEqual([
      "--host=-web",
      "--tag",
      "t1",
      "--",
      TREE,
    ]);
  });
});

describe("the agent's own directories (issue 33)", () => {
  it("are excluded from every backup, as literal patterns after the group's own excludes", async () => {
    const ran = await runBackup({
      command: backupCommand({ includes: ["/"], excludes: ["*.log"] }),
      agentDirs: ["/etc/fleetback-agent", "/var/lib/fleetback-agent/", "/opt/agent[1]*"],
      backup: { stdout: "", stderr: "", exitCode: 0 },
    });
    const [backup] = ran.calls;
    expect(backup?.args.slice(backup.args.indexOf("backup"))).toEqual([
      "backup",
      "--tag",
      "t1",
      "--exclude",
      "*.log",
      "--exclude",
      "/etc/fleetback-agent",
      "--exclude",
      "/var/lib/fleetback-agent",
      "--exclude",
      "/opt/agent\\[1\\]\\*",
      "--",
      "/",
    ]);
    expect(ran.lines).toContainEqual({
      stream: "agent",
      line: "the agent's own directories are never backed up: /etc/fleetback-agent, /var/lib/fleetback-agent, /opt/agent[1]*",
    });
  });
});

describe("backup on recorded restic output", () => {
  it.each(["0.14.0", "0.18.0"] as const)(
    "%s backup-1: succeeds with restic's summary and reports snapshots",
    async (version) => {
      const backup = recording(version, "backup-1");
      const ran = await runBackup({
        backup,
        snapshots: recording(version, "snapshots"),
      });
      expect(ran.outcome.status).toBe("succeeded");
      expect(ran.outcome.exit_code).toBe(0);
      expect(ran.outcome.error).toBeUndefined();
      expect(ran.outcome.summary).toMatchObject({
        files_new: 7,
        dirs_new: 9,
        total_files_processed: 7,
        total_bytes_processed: 65598,
      });
      expect(ran.outcome.summary).not.toHaveProperty("message_type");
      const snapshotId = ran.outcome.summary?.snapshot_id;
      expect(snapshotId).toMatch(version === "0.14.0" ? /^[0-9a-f]{8}$/ : /^[0-9a-f]{64}$/);
      if (version === "0.18.0") {
        expect(ran.outcome.summary).toHaveProperty("data_added_packed");
      }
      // Status lines become progress, never log lines; the summary is logged as a sentence.
      expect(ran.lines.some((entry) => entry.line.includes('"status"'))).toBe(false);
      expect(ran.lines.some((entry) => entry.line.includes('"summary"'))).toBe(false);
      expect(
        ran.lines.some(
          (entry) =>
            entry.stream === "stdout" &&
            entry.line.startsWith(`snapshot ${String(snapshotId).slice(0, 8)} saved: `),
        ),
      ).toBe(true);
      // Status lines are optional: 0.18 often prints none for a backup this small, 0.14 only the
      // one at the start, which has measured nothing ("0 of 1 files" from the scanner's first
      // moment) and is not sent: the page says unknown until the summary.
      const lines = statusLines(backup);
      if (version === "0.14.0") {
        expect(lines).toHaveLength(1);
        expect(lines[0]).not.toHaveProperty("files_done");
        expect(lines[0]).toMatchObject({ percent_done: 0, total_files: 1 });
      }
      expect(ran.progress).toEqual([]);
      expect(ran.reports).toHaveLength(1);
      const report = ran.reports[0];
      expect(report?.refreshed_at).toBe("2026-11-21T23:00:00.000Z");
      expect(report?.snapshots.length).toBeGreaterThan(1);
      const times = report?.snapshots.map((snapshot) => snapshot.time) ?? [];
      expect([...times].sort().reverse()).toEqual(times);
      const sized = report?.snapshots.filter((snapshot) => snapshot.size_bytes > 0) ?? [];
      expect(sized.length > 0).toBe(version === "0.18.0");
    },
  );

  it.each(["0.14.0", "0.18.0"] as const)(
    "%s backup-read-error: exit 3 succeeds with an error text and readable log",
    async (version) => {
      const ran = await runBackup({ backup: recording(version, "backup-read-error") });
      expect(ran.outcome).toMatchObject({ status: "succeeded", exit_code: 3, error: UNREADABLE_FILES_ERROR });
      expect(ran.outcome.summary?.snapshot_id).toBeDefined();
      const stderr = ran.lines.filter((entry) => entry.stream === "stderr").map((entry) => entry.line);
      expect(stderr[0]).toMatch(/^error during archival of \/proc\/self\/mem: /);
      expect(stderr.some((line) => line.startsWith("{"))).toBe(false);
      expect(ran.reports).toHaveLength(1);
    },
  );

  it("fails with restic's message on other exits and lists no snapshots", async () => {
    const ran = await runBackup({ backup: recording("0.18.0", "err-wrong-password-backup-json") });
    expect(ran.outcome).toEqual({
      status: "failed",
      exit_code: 12,
      error: "Fatal: wrong password or no key found",
    });
    expect(ran.calls.filter((call) => call.args.includes("snapshots"))).toEqual([]);
    expect(ran.reports).toEqual([]);
  });

  it("sends the first progress at once, then at most one per second, and the final state before finishing", async () => {
    // 25,000 files, trimmed to its first 3 and last 2 lines: 4 status lines, then the summary.
    const backup = recording("0.18.0", "backup-big-content");
    const lines = statusLines(backup);
    expect(lines).toHaveLength(4);
    const ran = await runBackup({ backup, msPerLine: 400 });
    const start = new Date("2026-11-21T23:00:00Z").getTime();
    expect(ran.progress.map((entry) => entry.at - start)).toEqual([0, 1000, 2000]);
    for (let i = 1; i < ran.progress.length - 1; i += 1) {
      expect((ran.progress[i]?.at ?? 0) - (ran.progress[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(1000);
    }
    // Line 1 at once; lines 2 and 3 share a window (3 wins); line 4 is the final state.
    const [first, , third, final] = lines;
    expect(ran.progress.map((entry) => entry.progress.files_done)).toEqual([
      first?.files_done ?? 0,
      third?.files_done,
      25000,
    ]);
    expect(first?.files_done).toBeLessThan(Number(third?.files_done));
    const current = first?.current_files;
    expect(ran.progress[0]?.progress).toEqual({
      percent_done: first?.percent_done,
      files_done: first?.files_done ?? 0,
      files_total: first?.total_files,
      bytes_done: first?.bytes_done ?? 0,
      bytes_total: first?.total_bytes,
      ...(Array.isArray(current) ? { current_file: current[0] } : {}),
    });
    expect(final).toMatchObject({ percent_done: 1, total_bytes: final?.bytes_done });
    expect(ran.progress.at(-1)?.progress).toMatchObject({ percent_done: 1, bytes_done: final?.bytes_done });
  });

  it("sends 0.14's progress without its 2^63 seconds_remaining and without the line that measured nothing", async () => {
    // 50,000 empty files, trimmed to its first 3 and last 2 lines: 4 status lines, then the summary.
    const backup = recording("0.14.0", "backup-big-empty");
    const lines = statusLines(backup);
    expect(lines).toHaveLength(4);
    expect(backup.stdout.split("\n")[3]).toContain('"seconds_remaining":9223372036854775808');
    // The first line is the scanner's first moment: "0 of 1 files", nothing measured.
    expect(lines[0]).toEqual({ message_type: "status", percent_done: 0, total_files: 1 });
    const ran = await runBackup({ backup, msPerLine: 1000 });
    expect(ran.progress).toHaveLength(3);
    expect(ran.progress.some((entry) => entry.progress.files_total === 1)).toBe(false);
    const second = lines[1]?.current_files;
    expect(Array.isArray(second) && second[0]).toMatch(/\/big\/empty\/tree\/d000\/e\d\d\/f\d{3}$/);
    expect(ran.progress[0]?.progress.current_file).toBe(Array.isArray(second) ? second[0] : undefined);
    const final = lines[3];
    const current = final?.current_files;
    expect(final?.total_files).toBe(50000);
    // No eta_seconds: 2^63 is restic's "cannot tell", shown as unknown, not as a time.
    expect(ran.progress[2]?.progress).toEqual({
      percent_done: 0,
      files_done: final?.files_done,
      files_total: 50000,
      bytes_done: 0,
      ...(Array.isArray(current) ? { current_file: current[0] } : {}),
    });
  });
});

describe("backup hooks", () => {
  const ok = { stdout: '{"message_type":"summary","snapshot_id":"0123abcd"}\n', stderr: "", exitCode: 0 };

  it("a failing pre-hook fails the job and restic is not run; the post-hook is not run either", async () => {
    const ran = await runBackup({
      command: backupCommand({
        pre_hook: `echo "dumping $FLEETBACK_JOB_KIND"; echo ${PASSWORD} >&2; exit 4`,
        post_hook: "echo post",
      }),
      backup: ok,
      realHooks: true,
    });
    expect(ran.outcome).toEqual({ status: "failed", exit_code: null, error: "pre-hook failed (exit 4)" });
    expect(ran.calls.map((call) => call.command)).toEqual(["/bin/sh"]);
    const agentLines = ran.lines.filter((entry) => entry.stream === "agent").map((entry) => entry.line);
    expect(agentLines).toContain("pre-hook: dumping backup");
    expect(agentLines.join("\n")).not.toContain(PASSWORD);
    expect(agentLines.at(-1)).toBe("pre-hook failed (exit 4); restic was not run");
  });

  it("runs hooks from / with a clean environment, and the post-hook sees the job status", async () => {
    const script =
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
      'echo "cwd=$(pwd) id=$FLEETBACK_JOB_ID status=${FLEETBACK_JOB_STATUS:-none} pw=${RESTIC_PASSWORD:-unset}"';
    const ran = await runBackup({
      command: backupCommand({ pre_hook: script, post_hook: script }),
      backup: ok,
      realHooks: true,
    });
    expect(ran.outcome.status).toBe("succeeded");
    expect(ran.calls.map((call) => call.command)).toEqual([
      "/bin/sh",
      "restic",
      "/bin/sh",
      "restic",
      "restic",
    ]);
    const agentLines = ran.lines.filter((entry) => entry.stream === "agent").map((entry) => entry.line);
    const raw = recordedStats();
    expect(agentLines).toEqual([
      "pre-hook: cwd=/ id=01M807SKJ8H7QEZZS1A0ZWSK9T status=none pw=unset",
      "post-hook: cwd=/ id=01M807SKJ8H7QEZZS1A0ZWSK9T status=succeeded pw=unset",
      `repository stats: 6 snapshots, ${raw.total_size} bytes stored, ${raw.total_uncompressed_size} bytes uncompressed, compression ratio ${raw.compression_ratio.toFixed(2)}`,
    ]);
  });

  it("runs the post-hook after a failure, and its own failure changes nothing", async () => {
    const ran = await runBackup({
      command: backupCommand({ post_hook: 'echo "status=$FLEETBACK_JOB_STATUS"; exit 2' }),
      backup: { stdout: "", stderr: "Fatal: unable to open config file\n", exitCode: 1 },
      realHooks: true,
    });
    expect(ran.outcome).toEqual({
      status: "failed",
      exit_code: 1,
      error: "Fatal: unable to open config file",
    });
    const agentLines = ran.lines.filter((entry) => entry.stream === "agent").map((entry) => entry.line);
    expect(agentLines).toEqual([
      "post-hook: status=failed",
      "post-hook failed (exit 2); the job status is not changed",
    ]);
  });

  it("cancel during the pre-hook kills it and reports cancelled without running restic", async () => {
    const controller = new AbortController();
    // Cancelled once the hook says it runs, and the hook would sleep past the test's timeout: the
    // run ending at all shows the hook was killed, not waited for. How soon is the machine's speed.
    const ran = await runBackup({
      command: backupCommand({ pre_hook: "echo started; sleep 300" }),
      backup: ok,
      realHooks: true,
      signal: controller.signal,
      onLog: (_stream, line) => {
        if (line === "pre-hook: started") {
          controller.abort();
        }
      },
    });
    expect(ran.outcome).toEqual({ status: "cancelled", exit_code: null });
    expect(ran.calls.map((call) => call.command)).toEqual(["/bin/sh"]);
  });

  it("cancel while restic runs says so in the job's log, which would otherwise end mid-run", async () => {
    const controller = new AbortController();
    const ran = await runBackup({
      backup: ok,
      signal: controller.signal,
      // restic reports having read everything, then waits on its upload until it is interrupted.
      backupRun: (spec) =>
        new Promise((resolve) => {
          spec.signal?.addEventListener("abort", () => resolve(INTERRUPTED));
          spec.onLine({
            stream: "stdout",
            text: '{"message_type":"status","percent_done":1,"total_files":4,"files_done":4,"total_bytes":9,"bytes_done":9}',
          });
          controller.abort();
        }),
    });
    expect(ran.outcome).toMatchObject({ status: "cancelled", exit_code: null });
    expect(ran.lines.at(-1)).toEqual({
      stream: "agent",
      line: "cancelled: restic was interrupted; what it had not finished is not kept",
    });
  });
});

describe("snapshot listing after a backup", () => {
  it("comes after job.finished (protocol 10) and runs to its end when the next job is waiting", async () => {
    let listingSignal: AbortSignal | undefined;
    const next = nextJobWaiting();
    const ran = await runBackup({
      backup: recording("0.18.0", "backup-1"),
      snapshotsRun: (spec) => {
        listingSignal = spec.signal;
        // Answers on the next turn, after the preemption below has landed.
        return new Promise((resolve) =>
          setTimeout(() => {
            spec.onLine({ stream: "stdout", text: recording("0.18.0", "snapshots").stdout.trim() });
            resolve(EXITED_0);
          }, 10),
        );
      },
      abortAfterFinishWith: next,
    });
    expect(ran.outcome).toMatchObject({ status: "succeeded", exit_code: 0 });
    expect(ran.reportsAtFinish).toBe(0);
    expect(ran.reports).toHaveLength(1);
    expect(listingSignal?.aborted).toBe(false);
    // The stats are skipped without starting restic.
    expect(ran.calls.filter((call) => call.args.includes("stats"))).toEqual([]);
    expect(ran.lines.map((entry) => entry.line)).toContain(
      `repository stats skipped: ${next.message}; the next backup reads them`,
    );
  });

  it("gives the listing 10 s once the next job is waiting, then stops it", async () => {
    const timers = createManualTimers(JOB_TEST_START);
    let listing: ProcessSpec | undefined;
    let stopped = false;
    const running = runBackup({
      backup: recording("0.18.0", "backup-1"),
      timers,
      // A repository that stopped answering right after the backup: the listing hangs.
      snapshotsRun: (spec) => {
        listing = spec;
        return new Promise((resolve) => {
          spec.signal?.addEventListener("abort", () => {
            stopped = true;
            resolve(INTERRUPTED);
          });
        });
      },
      abortAfterFinishWith: nextJobWaiting(),
    });
    await waitUntil(() => listing !== undefined);
    timers.advance(LISTING_PREEMPT_GRACE_MS - 1);
    expect(stopped).toBe(false);
    timers.advance(1);
    // The stop follows the timer within advance itself: had it been due a millisecond earlier, the
    // check above would have seen it, with no sleep to give it time.
    expect(stopped).toBe(true);
    const ran = await running;
    expect(LISTING_PREEMPT_GRACE_MS).toBe(10_000);
    expect(ran.reports).toEqual([]);
    expect(ran.calls.filter((call) => call.args.includes("stats"))).toEqual([]);
  });

  it("stops when the agent shuts down after job.finished", async () => {
    let listed = false;
    const ran = await runBackup({
      backup: recording("0.18.0", "backup-1"),
      snapshotsRun: (spec) =>
        new Promise((resolve) => {
          spec.signal?.addEventListener("abort", () => resolve(INTERRUPTED));
          setTimeout(() => {
            listed = true;
            resolve(EXITED_0);
          }, 5_000);
        }),
      abortAfterFinishWith: new Error("the agent is stopping"),
    });
    expect(listed).toBe(false);
    expect(ran.reports).toEqual([]);
    expect(ran.calls.filter((call) => call.args.includes("stats"))).toEqual([]);
  });

  it("gives restic snapshots 60 s: still listing at 59.999 s, given up at 60 s, and the backup succeeds", async () => {
    const timers = createManualTimers(JOB_TEST_START);
    let listing: ProcessSpec | undefined;
    let ended = false;
    const running = runBackup({
      backup: recording("0.18.0", "backup-1"),
      timers,
      // A restic that never answers; the runner ends it at spec.timeoutMs, as the spawn adapter
      // does with a real process (spawn-adapter.test.ts), here on the manual clock.
      snapshotsRun: (spec) => {
        listing = spec;
        return new Promise((resolve) => {
          timers.after(spec.timeoutMs ?? Number.POSITIVE_INFINITY, () => {
            ended = true;
            resolve({ kind: "exited", exitCode: null, signal: "SIGTERM", cancelled: false, timedOut: true });
          });
        });
      },
    });
    await waitUntil(() => listing !== undefined);
    // The listing after a backup is bounded by 60 s, written out here rather than read from the code.
    expect(listing?.timeoutMs).toBe(60_000);
    timers.advance(59_999);
    expect(ended).toBe(false);
    timers.advance(1);
    expect(ended).toBe(true);
    const ran = await running;
    expect(ran.outcome).toMatchObject({ status: "succeeded", exit_code: 0 });
    expect(ran.reports).toEqual([]);
    expect(ran.lines.map((entry) => entry.line)).toContain(
      "listing snapshots failed: restic timed out; the backup itself is not affected",
    );
  });
});

describe("backup repository stats", () => {
  it("after success runs one raw-data stats with a timeout and reports its sizes", async () => {
    const ran = await runBackup({
      backup: recording("0.18.0", "backup-1"),
      snapshots: recording("0.18.0", "snapshots"),
      stats: recording("0.18.0", "stats-raw"),
    });
    expect(ran.outcome.status).toBe("succeeded");
    const statsCall = ran.calls.find((call) => call.args.includes("stats"));
    expect(statsCall?.args).toEqual([
      "--cache-dir",
      "/state/cache",
      "--json",
      "stats",
      "--no-lock",
      "--mode",
      "raw-data",
    ]);
    expect(statsCall?.timeoutMs).toBe(BACKUP_STATS_TIMEOUT_MS);
    const raw = recordedStats();
    expect(ran.stats).toEqual([
      {
        raw_size_bytes: raw.total_size,
        total_size_bytes: raw.total_uncompressed_size,
        snapshot_count: 6,
        compression_ratio: raw.compression_ratio,
      },
    ]);
  });

  it("a failing stats run is logged and changes neither the outcome nor the snapshot report", async () => {
    const ran = await runBackup({
      backup: recording("0.18.0", "backup-1"),
      snapshots: recording("0.18.0", "snapshots"),
      stats: recording("0.18.0", "err-locked-prune"),
    });
    expect(ran.outcome).toMatchObject({ status: "succeeded", exit_code: 0 });
    expect(ran.reports).toHaveLength(1);
    expect(ran.stats).toEqual([]);
    expect(ran.lines.map((entry) => entry.line)).toContain(
      `reading repository stats failed: ${recordedLockedError("0.18.0")}; the backup itself is not affected`,
    );
  });

  it("a stats run stopped because the next job is waiting is skipped, not reported as a failure", async () => {
    const ran = await runBackup({
      backup: recording("0.18.0", "backup-1"),
      snapshots: recording("0.18.0", "snapshots"),
      statsRun: (spec) =>
        new Promise((resolve) => {
          const stopped = () =>
            resolve({ kind: "exited", exitCode: null, signal: "SIGTERM", cancelled: true, timedOut: false });
          if (spec.signal?.aborted) {
            stopped();
          }
          spec.signal?.addEventListener("abort", stopped);
        }),
      abortAfterFinishWith: nextJobWaiting(),
    });
    expect(ran.outcome).toMatchObject({ status: "succeeded", exit_code: 0 });
    expect(ran.reports).toHaveLength(1);
    expect(ran.stats).toEqual([]);
    const lines = ran.lines.map((entry) => entry.line);
    expect(lines).toContain(
      "repository stats skipped: job 01JNEXTJOB0000000000000000 (check) is waiting to run; the next backup reads them",
    );
    expect(lines.some((line) => line.startsWith("reading repository stats failed"))).toBe(false);
  });

  it("a failed backup runs no stats", async () => {
    const ran = await runBackup({ backup: recording("0.18.0", "err-wrong-password-backup-json") });
    expect(ran.calls.filter((call) => call.args.includes("stats"))).toEqual([]);
    expect(ran.stats).toEqual([]);
  });
});

describe("browse index after a backup", () => {
  it.each(["0.18.0", "0.14.0"] as const)(
    "restic %s: builds the new snapshot's index by its full id, after the list and the stats",
    async (version) => {
      const ran = await runBackup({
        backup: recording(version, "backup-1"),
        snapshots: recording(version, "snapshots"),
        prebuild: true,
      });
      expect(ran.outcome.status).toBe("succeeded");
      const listed: { id: string }[] = JSON.parse(recording(version, "snapshots").stdout);
      const summaryId = String(ran.outcome.summary?.snapshot_id);
      const full = listed.find((snapshot) => snapshot.id.startsWith(summaryId))?.id;
      expect(full).toHaveLength(64);
      expect(ran.prebuilt).toEqual([{ snapshotId: full, aborted: false }]);
      expect(ran.stats).toHaveLength(1);
    },
  );

  it("is skipped when the next job is waiting, when the backup failed, and when the list lacks the snapshot", async () => {
    const preempted = await runBackup({
      backup: recording("0.18.0", "backup-1"),
      snapshots: recording("0.18.0", "snapshots"),
      abortAfterFinishWith: nextJobWaiting(),
      prebuild: true,
    });
    expect(preempted.reports).toHaveLength(1);
    expect(preempted.prebuilt).toEqual([]);
    const failed = await runBackup({
      backup: recording("0.18.0", "err-wrong-password-backup-json"),
      prebuild: true,
    });
    expect(failed.prebuilt).toEqual([]);
    const unlisted = await runBackup({ backup: recording("0.18.0", "backup-1"), prebuild: true });
    expect(unlisted.prebuilt).toEqual([]);
    expect([...preempted.catalogued, ...failed.catalogued, ...unlisted.catalogued]).toEqual([]);
  });
});

describe("file catalogue after a backup", () => {
  it.each(["0.18.0", "0.14.0"] as const)(
    "restic %s: catches the group up from the listed snapshots, under the new snapshot's hostname",
    async (version) => {
      const ran = await runBackup({
        backup: recording(version, "backup-1"),
        snapshots: recording(version, "snapshots"),
        prebuild: true,
      });
      const [snapshotId] = ran.prebuilt.map((call) => call.snapshotId);
      const listed = ran.reports.flatMap((report) => report.snapshots);
      const made = listed.find((s) => s.id === snapshotId);
      expect(made?.hostname).not.toBe("");
      expect(ran.catalogued).toEqual([
        { repositoryUrl: "/srv/repo", tag: "t1", hostname: made?.hostname, snapshots: listed },
      ]);
    },
  );

  it("is not sent when no index was built", async () => {
    const ran = await runBackup({
      backup: recording("0.18.0", "backup-1"),
      snapshots: recording("0.18.0", "snapshots"),
      prebuild: true,
      prebuiltDir: () => undefined,
    });
    expect(ran.prebuilt).toHaveLength(1);
    expect(ran.catalogued).toEqual([]);
  });
});

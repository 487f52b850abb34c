import { describe, expect, it } from "vitest";
import { backupCommand, runBackup } from "../testing/backup-run.js";
import { INTERRUPTED, TEST_PASSWORD } from "../testing/job-run.js";
import { recordedStats } from "../testing/recorded-stats.js";

const PASSWORD = TEST_PASSWORD;

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

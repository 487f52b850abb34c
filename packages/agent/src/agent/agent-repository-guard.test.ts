/**
 * The repository guard behind a real agent with real restic (issue 31): a repository that does
 * not answer fails the job within the watch's time, saying so on `job.finished`; a lock whose
 * process is gone is removed by `restic unlock` and the job goes through; a lock whose process
 * still runs fails the job naming it and the command an admin may run.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtemp, readdir } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkCommand, finishedOf, logLines, runJob, startHarness } from "../testing/agent-harness.js";
import { deadRestUrl } from "../testing/rest-server.js";
import { useTestServer } from "../testing/test-server.js";
import { resticBinary, resticNote } from "../testing/tools.js";

const server = useTestServer();

const restic18 = resticBinary("0.18") ?? "";
const restic14 = resticBinary("0.14") ?? "";
const PASSWORD = "guard-test-Pa55";

// The jobs below wait up to 60 s for restic's reports: a bound for a loaded machine, so the tests'
// own timeout sits above it.
const GUARD_TESTS = { timeout: 150_000 };

describe.skipIf(restic18 === "")(
  `an unreachable repository with restic 0.18${resticNote("0.18")}`,
  GUARD_TESTS,
  () => {
    it("fails the job as unreachable once restic and a direct request got no answer for the watch's time", async () => {
      const harness = await startHarness(server(), {
        resticCommand: restic18,
        repositoryUnreachableAfterMs: 2_000,
      });
      try {
        const url = await deadRestUrl();
        harness.peer.send("config.update", {
          slot: "repo",
          repository: { url, username: "u", password: PASSWORD },
        });
        // restic 0.18 alone would retry opening the repository for 15 minutes, far past this bound;
        // the error below says the watch (2 s here) ended it, which no clock reading has to prove.
        const reports = await runJob(harness, checkCommand(), 60_000);
        const finished = finishedOf(reports);
        expect(finished).toMatchObject({ status: "failed", repository_unreachable: true });
        // The silence is measured, so a loaded machine may see more than the watch's 2 s, never less.
        const silence =
          /^the repository did not answer for (\d+) s \(connection refused\): it is unreachable; the agent stopped restic$/.exec(
            finished?.error ?? "",
          );
        expect(silence, finished?.error).not.toBeNull();
        const seconds = Number(silence?.[1]);
        expect(seconds).toBeGreaterThanOrEqual(2);
        const lines = logLines(reports);
        expect(lines).toContain(
          `stderr: fleetback-agent: the repository did not answer for ${seconds} s (connection refused); stopping restic`,
        );
        expect(lines.at(-1)).toBe(`agent: ${finished?.error}`);
        const probes = harness.calls.filter((call) => call.args.includes("cat"));
        expect(probes.map((call) => call.args.slice(call.args.indexOf("cat")))).toEqual([
          ["cat", "--no-lock", "config"],
        ]);
        expect(lines.join("\n")).not.toContain(PASSWORD);
      } finally {
        await harness.stop();
      }
    });
  },
);

describe.skipIf(restic14 === "")(
  `an unreachable repository with restic 0.14${resticNote("0.14")}`,
  GUARD_TESTS,
  () => {
    it("fails the job as unreachable at once: 0.14 gives up opening a repository nobody answers for", async () => {
      const harness = await startHarness(server(), { resticCommand: restic14 });
      try {
        const url = await deadRestUrl();
        harness.peer.send("config.update", { slot: "repo", repository: { url, password: PASSWORD } });
        const finished = finishedOf(await runJob(harness, checkCommand(), 60_000));
        expect(finished).toMatchObject({
          status: "failed",
          exit_code: 1,
          repository_unreachable: true,
          error: "the repository did not answer (connection refused): it is unreachable",
        });
      } finally {
        await harness.stop();
      }
    });
  },
);

/** A local repository with a backup from stdin holding its lock until the test lets it go. */
async function lockedRepository(restic: string): Promise<{ dir: string; holder: ChildProcess }> {
  const root = await mkdtemp(join(tmpdir(), "fleetback-lock-"));
  const dir = join(root, "repo");
  const env = { ...process.env, RESTIC_REPOSITORY: dir, RESTIC_PASSWORD: PASSWORD };
  execFileSync(restic, ["--cache-dir", join(root, "cache"), "init"], { env, stdio: "ignore" });
  const holder = spawn(
    restic,
    ["--cache-dir", join(root, "cache"), "-v", "backup", "--stdin", "--stdin-filename", "held"],
    {
      env,
      stdio: ["pipe", "pipe", "ignore"],
    },
  );
  // restic says "load index files" (0.14 and 0.18 alike) only once it holds the lock, whose file
  // it has written whole by then: a signal, however long a loaded machine takes to get there.
  await new Promise<void>((resolve, reject) => {
    let out = "";
    holder.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (out.includes("load index files")) {
        resolve();
      }
    });
    holder.once("exit", (code) =>
      reject(new Error(`restic backup --stdin ended (${code}) before locking: ${out}`)),
    );
  });
  const readable = (await readdir(join(dir, "locks"))).some((id) => {
    try {
      execFileSync(restic, ["--cache-dir", join(root, "cache"), "--no-lock", "cat", "lock", id], {
        env,
        stdio: "ignore",
      });
      return true;
    } catch {
      return false;
    }
  });
  if (!readable) {
    throw new Error("restic backup --stdin said it was locked, but its lock cannot be read back");
  }
  return { dir, holder };
}

async function killed(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

describe.each([
  ["0.18", restic18],
  ["0.14", restic14],
] as const)("a lock left in the repository, restic %s", GUARD_TESTS, (version, restic) => {
  it.skipIf(restic === "")(
    `is removed by restic unlock when its process is gone, and the check goes through${resticNote(version)}`,
    async () => {
      const { dir, holder } = await lockedRepository(restic);
      // A backup stopped where it could not remove its lock: same host, its PID gone.
      await killed(holder);
      const harness = await startHarness(server(), { resticCommand: restic });
      try {
        harness.peer.send("config.update", { slot: "repo", repository: { url: dir, password: PASSWORD } });
        const reports = await runJob(harness, checkCommand(), 60_000);
        expect(finishedOf(reports)).toMatchObject({ status: "succeeded", exit_code: 0 });
        const lines = logLines(reports);
        expect(lines).toContain(
          `stderr: unable to create lock in backend: repository is already locked by PID ${holder.pid} on ${hostname()} by ${process.env.USER ?? "root"} (UID ${process.getuid?.()}, GID ${process.getgid?.()})`,
        );
        expect(
          lines.some((line) =>
            line.startsWith(
              `stderr: fleetback-agent: the repository is locked by PID ${holder.pid} on ${hostname()}`,
            ),
          ),
        ).toBe(true);
        expect(lines).toContain("stdout: no errors were found");
        const subcommands = harness.calls.map((call) =>
          call.args.find((arg) => ["check", "unlock"].includes(arg)),
        );
        expect(subcommands.filter((name) => name !== undefined)).toEqual(["check", "unlock", "check"]);
        expect(harness.calls.some((call) => call.args.includes("--remove-all"))).toBe(false);
      } finally {
        await harness.stop();
      }
    },
  );

  it.skipIf(restic === "")(
    `stays when its process still runs: the job names it and the command an admin may run${resticNote(version)}`,
    async () => {
      const { dir, holder } = await lockedRepository(restic);
      const harness = await startHarness(server(), { resticCommand: restic });
      try {
        harness.peer.send("config.update", { slot: "repo", repository: { url: dir, password: PASSWORD } });
        const finished = finishedOf(await runJob(harness, checkCommand(), 60_000));
        expect(finished?.status).toBe("failed");
        expect(finished?.repository_unreachable).toBeUndefined();
        expect(finished?.error).toMatch(
          new RegExp(
            `^the repository is locked by PID ${holder.pid} on ${hostname()} \\(user \\S+, created [^)]+\\); restic unlock left it, .* an admin may remove it with: restic -r ${dir} unlock --remove-all$`,
          ),
        );
      } finally {
        await harness.stop();
        await killed(holder);
      }
    },
  );
});

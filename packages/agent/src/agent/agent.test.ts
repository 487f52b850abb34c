/**
 * The agent against the test server with stand-in restic scripts: cancel and the process group,
 * truthful answers for what this version does not implement, the tool's environment, and job
 * reports that survive a reconnect.
 */
import { CLOSE_CODES } from "@fleetback/protocol";
import { afterEach, describe, expect, it, vi } from "vitest";
import { NO_CREDENTIALS_ERROR } from "../jobs/repository-refusal.js";
import {
  finishedOf,
  initCommand,
  jobReports,
  logLines,
  nextUlid,
  runJob,
  useHarness,
} from "../testing/agent-harness.js";
import { createEchoRestic, createSleepingRestic, sleepingPids } from "../testing/fake-restic.js";
import { isRunning, waitUntil } from "../testing/processes.js";
import { useTestServer } from "../testing/test-server.js";

const repository = { url: "/tmp/fleetback-unused-repo", password: "repo-password-1" };

const server = useTestServer();
const startAgent = useHarness(server);
afterEach(() => {
  vi.unstubAllEnvs();
});

describe("agent", () => {
  it("cancels the running job by killing its whole process group, and a queued one without running it", async () => {
    const fake = await createSleepingRestic();
    const harness = await startAgent({ resticCommand: fake.path });
    const { peer } = harness;
    peer.send("config.update", { slot: "repo", repository });
    const running = initCommand();
    const queued = initCommand();
    peer.send("command.run", running);
    peer.send("command.run", queued);
    const pids = await sleepingPids(fake.pidFile);
    expect(pids.every(isRunning)).toBe(true);

    await waitUntil(() => harness.agent.queue.activeJobIds().length === 2);
    peer.send("command.cancel", { job_id: queued.job_id });
    expect(finishedOf(await jobReports(peer, queued.job_id))).toEqual({
      job_id: queued.job_id,
      status: "cancelled",
      exit_code: null,
    });
    peer.send("command.cancel", { job_id: running.job_id });
    const reports = await jobReports(peer, running.job_id);
    expect(finishedOf(reports)).toMatchObject({ status: "cancelled" });
    expect(logLines(reports)).toContain("stdout: started");
    await waitUntil(() => !pids.some(isRunning));
    expect(peer.received.some((m) => m.type === "job.started" && m.payload.job_id === queued.job_id)).toBe(
      false,
    );
  });

  it("answers tree.list with an error result carrying the request id", async () => {
    const harness = await startAgent({ resticCommand: "/nonexistent/restic" });
    const id = nextUlid();
    harness.peer.send("tree.list", { snapshot_id: "473f1494", path: "/srv" }, id);
    const result = await harness.peer.next("tree.list.result");
    expect(result).toEqual({
      id,
      type: "tree.list.result",
      payload: { error: "no repository credentials have been pushed to this agent" },
    });
  });

  it("fails a restore without credentials at once, acks schedule.set, and refuses an update from another origin", async () => {
    const harness = await startAgent({ resticCommand: "/nonexistent/restic" });
    const { peer, log } = harness;
    expect(peer.received[0]?.payload).toMatchObject({ tool_version: "" });
    const restore = { job_id: nextUlid(), requires_admin_creds: false };
    peer.send("command.run", {
      ...restore,
      kind: "restore",
      restore: { snapshot_id: "473f1494", paths: ["/srv"], in_place: false, target_dir: "/tmp/restored" },
    });
    expect(finishedOf(await jobReports(peer, restore.job_id))).toEqual({
      job_id: restore.job_id,
      status: "failed",
      exit_code: null,
      error: NO_CREDENTIALS_ERROR,
    });
    peer.send("schedule.set", {
      version: 3,
      schedules: [{ id: nextUlid(), cron: "0 3 * * *", enabled: true, source_groups: [nextUlid()] }],
    });
    expect((await peer.next("schedule.ack")).payload).toEqual({ version: 3 });
    expect(harness.agent.scheduler.armed()).toHaveLength(1);
    peer.send("command.update", {
      version: "0.2.0",
      url: "https://server.example/install/agent/0.2.0",
      sha256: "ab".repeat(32),
      signature: `${"A".repeat(86)}==`,
    });
    // The bearer token goes with the download, so only to the agent's own server.
    expect((await peer.next("update.result")).payload).toEqual({
      version: "0.2.0",
      status: "refused",
      error: `the update URL is not on this agent's server (${server().url})`,
    });
    expect(log.entries.some((entry) => entry.message === "update refused")).toBe(true);
  });

  it("reports a restic that is missing as a failed job", async () => {
    const harness = await startAgent({ resticCommand: "/nonexistent/restic" });
    harness.peer.send("config.update", { slot: "repo", repository });
    expect(finishedOf(await runJob(harness, initCommand()))).toMatchObject({
      status: "failed",
      exit_code: null,
      error: "restic not found (/nonexistent/restic)",
    });
  });

  it("hands restic none of the agent's own RESTIC_* or cloud variables", async () => {
    vi.stubEnv("RESTIC_PASSWORD_COMMAND", "echo from-parent");
    vi.stubEnv("RESTIC_REPOSITORY", "/tmp/parent-repo");
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "parent-aws-secret");
    const harness = await startAgent({
      resticCommand: await createEchoRestic(),
      parentEnv: process.env,
    });
    harness.peer.send("config.update", {
      slot: "repo",
      repository,
      caps: { bandwidth_up_kbps: 100, bandwidth_down_kbps: null },
    });
    const job = { ...initCommand(), bandwidth_down_kbps: 50 };
    harness.peer.send("command.run", job);
    const lines = logLines(await jobReports(harness.peer, job.job_id));
    const env = lines
      .filter((line) => line.startsWith("stdout: env: "))
      .map((line) => line.slice("stdout: env: ".length));
    expect(env.filter((line) => /^(RESTIC_|AWS_)/.test(line)).sort()).toEqual([
      `RESTIC_CACHE_DIR=${harness.stateDir}/cache`,
      "RESTIC_PASSWORD=***",
      "RESTIC_PROGRESS_FPS=1",
      "RESTIC_REPOSITORY=/tmp/fleetback-unused-repo",
    ]);
    expect(lines).toContain(
      `stdout: argv: --cache-dir ${harness.stateDir}/cache --limit-upload 100 --limit-download 50 --json init`,
    );
  });

  it("reports a job that finished while disconnected after the next hello, which still lists it", async () => {
    const sleeper = await createSleepingRestic();
    // Half a second before the reconnect: the job ends inside that window.
    const harness = await startAgent({ resticCommand: sleeper.path, random: () => 0.5 });
    harness.peer.send("config.update", { slot: "repo", repository });
    const job = initCommand();
    harness.peer.send("command.run", job);
    await harness.peer.next("job.started");
    await sleepingPids(sleeper.pidFile);
    harness.peer.close(CLOSE_CODES.replaced);
    await waitUntil(
      () => harness.log.entries.some((entry) => entry.message.includes("reconnecting")) === true,
    );
    // Cancelled locally while there is no connection, as a shutdown would: the report must wait.
    harness.agent.queue.cancel(job.job_id);
    await harness.agent.queue.idle();
    const again = await server().nextPeer();
    const hello = await again.next("hello");
    expect(hello.payload.running_job_ids).toEqual([job.job_id]);
    expect((await again.next("job.finished")).payload).toMatchObject({
      job_id: job.job_id,
      status: "cancelled",
    });
    harness.peer = again;
  });
});

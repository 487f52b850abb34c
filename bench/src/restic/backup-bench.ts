/**
 * @module restic/backup-bench
 * B1: a backup of the generated 20,000-file, ~400 MB tree through Fleetback (run-now until the
 * API reads the job succeeded) against the same `restic backup` run bare into a second repository
 * of the same rest-server, both first backups into empty repositories; then the job's recorded
 * duration against restic's own `total_duration` from the summary the job keeps. A second,
 * incremental backup of each is reported as a note.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BudgetRow } from "../budgets.js";
import { type AgentHost, type BenchApi, until } from "./agent-host.js";
import { RESTIC, type RestServer } from "./tools.js";
import { BACKUP_TREE, ensureTree } from "./trees.js";

interface BareRun {
  wallMs: number;
  totalDurationMs: number;
}

export function restic(
  args: string[],
  repository: { url: string; password: string },
): Promise<{ wallMs: number; stdout: string }> {
  const started = performance.now();
  const child = spawn(RESTIC, args, {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      RESTIC_REPOSITORY: repository.url,
      RESTIC_PASSWORD: repository.password,
      // Its own cache, apart from the agent's: each side pays for building its cache alike.
      RESTIC_CACHE_DIR: join(tmpdir(), "fleetback-bench-restic-cache"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => {
      const wallMs = performance.now() - started;
      if (code === 0) {
        resolve({ wallMs, stdout });
      } else {
        reject(new Error(`restic ${args[0]} exited with ${code}: ${stderr.slice(-2000)}`));
      }
    });
  });
}

function totalDurationMs(summary: unknown): number {
  const seconds = (summary as { total_duration?: unknown } | undefined)?.total_duration;
  return typeof seconds === "number" ? seconds * 1000 : Number.NaN;
}

async function bareBackup(root: string, repository: { url: string; password: string }): Promise<BareRun> {
  const { wallMs, stdout } = await restic(["backup", "--json", root], repository);
  const summary = stdout
    .split("\n")
    .filter((line) => line.includes('"summary"'))
    .map((line) => JSON.parse(line) as unknown)
    .at(-1);
  return { wallMs, totalDurationMs: totalDurationMs(summary) };
}

interface JobJson {
  status: string;
  started_at: string | null;
  finished_at: string | null;
  summary?: unknown;
}

interface FleetbackRun extends BareRun {
  recordedMs: number;
}

/** Exported for B4, which backs up its tree the same way. */
export async function runNow(
  api: BenchApi,
  hostId: string,
  groupId: string,
  timeoutMs: number,
): Promise<FleetbackRun> {
  // The end is the server's recorded finished_at on this same clock, so the poll can be slow: at
  // every 25 ms it cost the server ~0.5 s of CPU during a 3 s backup, taken from restic's cores.
  const started = Date.now();
  const { job_id: jobId } = await api.send<{ job_id: string }>(
    "POST",
    `/api/hosts/${hostId}/source-groups/${groupId}/run`,
  );
  const job = await until(
    `backup job ${jobId}`,
    timeoutMs,
    async () => {
      const { job } = await api.get<{ job: JobJson }>(`/api/jobs/${jobId}`);
      if (["failed", "cancelled", "lost"].includes(job.status)) {
        throw new Error(`backup job ${jobId} ended ${job.status}`);
      }
      return job.status === "succeeded" ? job : undefined;
    },
    500,
  );
  const wallMs = job.finished_at ? Date.parse(job.finished_at) - started : Number.NaN;
  const recordedMs =
    job.started_at && job.finished_at ? Date.parse(job.finished_at) - Date.parse(job.started_at) : Number.NaN;
  return { wallMs, recordedMs, totalDurationMs: totalDurationMs(job.summary) };
}

export async function createGroup(
  api: BenchApi,
  hostId: string,
  name: string,
  root: string,
): Promise<string> {
  const { source_group } = await api.send<{ source_group: { id: string } }>(
    "POST",
    `/api/hosts/${hostId}/source-groups`,
    { name, includes: [root] },
  );
  return source_group.id;
}

const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export async function runBackupBench(
  api: BenchApi,
  rest: RestServer,
  host: AgentHost,
  serverCpuMs: () => Promise<number>,
): Promise<{ rows: BudgetRow[]; notes: string[] }> {
  const tree = await ensureTree(BACKUP_TREE);
  const bareUser = "bench-bare";
  const barePassword = randomBytes(24).toString("base64url");
  rest.addUser(bareUser, barePassword);
  const bare = {
    url: `rest:${rest.url.replace("http://", `http://${bareUser}:${barePassword}@`)}/${bareUser}/`,
    password: barePassword,
  };
  await restic(["init"], bare);
  const groupId = await createGroup(api, host.hostId, "b1", tree.root);

  // Alternated so that neither side always runs on the warmer machine.
  const bareFirst = await bareBackup(tree.root, bare);
  // What else runs on the machine's cores while restic works inside Fleetback.
  const cpuBefore = { server: await serverCpuMs(), agent: await host.cpuMs() };
  const fleetFirst = await runNow(api, host.hostId, groupId, 600_000);
  const cpuUsed = {
    server: (await serverCpuMs()) - cpuBefore.server,
    agent: (await host.cpuMs()) - cpuBefore.agent,
  };
  const fleetSecond = await runNow(api, host.hostId, groupId, 600_000);
  const bareSecond = await bareBackup(tree.root, bare);

  const label = `${tree.files.toLocaleString("en")} files / ${Math.round(tree.bytes / 1e6)} MB`;
  const rows: BudgetRow[] = [
    {
      id: "B1",
      engine: "pglite",
      case: `backup of ${label}: run-now → job recorded succeeded`,
      measured: fleetFirst.wallMs,
      unit: "ms",
      baselineName: "bare restic backup, same rest-server",
      baseline: bareFirst.wallMs,
      budget: bareFirst.wallMs * 1.05,
    },
    {
      id: "B1",
      engine: "pglite",
      case: "that job's recorded duration (started → finished)",
      measured: fleetFirst.recordedMs,
      unit: "ms",
      baselineName: "restic's own total_duration",
      baseline: fleetFirst.totalDurationMs,
      budget: fleetFirst.totalDurationMs * 1.02,
    },
  ];
  const notes = [
    `B1: first backups of ${label}: Fleetback run-now → succeeded ${fmt(fleetFirst.wallMs)} (restic inside it ${fmt(fleetFirst.totalDurationMs)}), bare restic ${fmt(bareFirst.wallMs)} (its total_duration ${fmt(bareFirst.totalDurationMs)})`,
    `B1: during that run the server used ${cpuUsed.server} ms of CPU and the agent (not restic) ${cpuUsed.agent} ms`,
    `B1: second (incremental) backups of the unchanged tree: Fleetback ${fmt(fleetSecond.wallMs)} (recorded ${fmt(fleetSecond.recordedMs)}, restic ${fmt(fleetSecond.totalDurationMs)}), bare restic ${fmt(bareSecond.wallMs)} (${fmt(bareSecond.totalDurationMs)})`,
  ];
  return { rows, notes };
}

/**
 * @module fleet/job-logs-bench
 * Budget B3 of issue 19: 50 jobs stream their log lines at once, as 50 busy restic runs would,
 * and the server stores every line. Each simulated agent takes the backup the server queued for it
 * (the schedule storm leaves one per host), sends job.started, `linesPerJob` log.stream lines and
 * job.finished; the server stores a job's lines before its result, so the latest `finished_at` it
 * records (its clock is this machine's) is when every line is stored. The jobs are polled every
 * 500 ms only to learn that they ended: at 50 ms, eight pollers cost the server more CPU than a
 * quarter of the lines it was storing (each GET reads the token and the job), which is the bench
 * measuring itself, as B1's poll did. The baseline is one INSERT per line into
 * an embedded database of the same engine, in this process: what the writer's batching is for.
 */
import { connect, executeRows, IN_MEMORY } from "@fleetback/db";
import { encode } from "@fleetback/protocol";
import { sql } from "drizzle-orm";
import { pollFetch } from "./poll-fetch.js";
import type { SimAgent } from "./sim-agents.js";
import { pool } from "./sim-agents.js";

export interface JobLogsResult {
  jobs: number;
  lines: number;
  linesPerSecond: number;
  /** Lines the API lists for the first job: must be `linesPerJob`. */
  storedOfFirst: number;
}

function queuedBackup(agent: SimAgent): string {
  for (const message of [...agent.received].reverse()) {
    if (message.type === "command.run" && message.payload.kind === "backup") {
      return message.payload.job_id;
    }
  }
  throw new Error(`host ${agent.host.hostId} holds no queued backup`);
}

async function getJson<T>(url: string, token: string): Promise<T> {
  // A fresh connection per poll: a reused one can meet the server's keep-alive timer closing it.
  const res = await pollFetch(url, { headers: { Authorization: `Bearer ${token}`, Connection: "close" } });
  if (!res.ok) {
    throw new Error(`GET ${url}: ${res.status}`);
  }
  return (await res.json()) as T;
}

export async function streamJobLogs(
  url: string,
  token: string,
  agents: SimAgent[],
  linesPerJob: number,
): Promise<JobLogsResult> {
  const jobs = agents.map((agent) => ({ agent, jobId: queuedBackup(agent) }));
  // Encoded before the clock starts, as B5's parts are: 50 real agents encode their own frames on
  // their own hosts, where this one process would spend ~0.7 s of CPU on them inside the window.
  const ts = new Date().toISOString();
  const lineFrames = jobs.map(({ jobId }) =>
    Array.from({ length: linesPerJob }, (_, i) =>
      encode("log.stream", {
        job_id: jobId,
        stream: "stdout",
        line: `[${i}] /srv/data/projects/fleetback/bench/file-${i}.bin: added to the repository`,
        ts,
      }),
    ),
  );
  const started = Date.now();
  let lastFinishedAt = Number.NEGATIVE_INFINITY;
  for (const { agent, jobId } of jobs) {
    agent.send("job.started", { job_id: jobId, kind: "backup", started_at: new Date().toISOString() });
  }
  // Interleaved, as 50 restic processes print at once.
  for (let i = 0; i < linesPerJob; i++) {
    jobs.forEach(({ agent }, j) => {
      agent.sendFrame(lineFrames[j]?.[i] ?? "");
    });
  }
  for (const { agent, jobId } of jobs) {
    agent.send("job.finished", { job_id: jobId, status: "succeeded", exit_code: 0 });
  }
  await pool(jobs, 8, async ({ agent, jobId }) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { job } = await getJson<{ job: { status: string; finished_at: string | null } }>(
        `${url}/api/jobs/${jobId}`,
        token,
      );
      if (job.status === "succeeded") {
        lastFinishedAt = Math.max(lastFinishedAt, Date.parse(job.finished_at ?? ""));
        return;
      }
      if (Date.now() > deadline) {
        const last = agent.received.slice(-3).map((m) => JSON.stringify(m).slice(0, 300));
        throw new Error(
          `job ${jobId} still ${job.status} after 60 s; the server's last frames: ${last.join(" ")}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  });
  const seconds = (lastFinishedAt - started) / 1000;
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new Error(
      `B3: the latest finished_at (${lastFinishedAt} ms) is not after the start (${started} ms)`,
    );
  }
  const first = jobs[0]?.jobId ?? "";
  const stored = await getJson<{ lines: unknown[] }>(
    `${url}/api/jobs/${first}/logs?limit=${Math.min(linesPerJob + 1, 5000)}`,
    token,
  );
  const lines = jobs.length * linesPerJob;
  return { jobs: jobs.length, lines, linesPerSecond: lines / seconds, storedOfFirst: stored.lines.length };
}

/** Lines per second stored one INSERT each into an in-memory PGlite. */
export async function oneInsertPerLine(lines: number): Promise<number> {
  const connection = await connect({ dataDir: IN_MEMORY });
  try {
    await executeRows(
      connection.db,
      sql`create table bench_log (job_id text not null, seq integer not null, stream text not null, line text not null, ts timestamptz not null, primary key (job_id, seq))`,
    );
    const started = performance.now();
    for (let i = 0; i < lines; i++) {
      await executeRows(
        connection.db,
        sql`insert into bench_log values (${"job"}, ${i}, ${"stdout"}, ${`[${i}] /srv/data/projects/fleetback/bench/file-${i}.bin: added to the repository`}, ${new Date().toISOString()})`,
      );
    }
    return lines / ((performance.now() - started) / 1000);
  } finally {
    await connection.close();
  }
}

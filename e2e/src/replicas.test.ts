/**
 * Issue 15 end to end: two real server processes on one PostgreSQL database and one data dir, a
 * proxy in front (agents and the installer go through it), a real agent running restic against
 * rest-server. The agent lands on replica B; the operator works on replica A: starts a backup,
 * watches its live job stream on A, browses the snapshot's tree from A. B is killed (SIGKILL) in
 * the middle of a backup: the agent moves to A through the proxy, the backup ends `succeeded`,
 * and a schedule then fires exactly one job per slot.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type AgentRun, startAgent } from "./support/agent-process.js";
import { ADMIN, type Api, bootstrapAdmin, createApi } from "./support/api.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { freePort } from "./support/ports.js";
import { createPostgresDatabase, type TestPostgres } from "./support/postgres.js";
import { type RestServer, startRestServer } from "./support/rest-server.js";
import { makeDataDir, type ServerProcess, startServerProcess } from "./support/server-process.js";
import { waitProgress } from "./support/slow-backup.js";
import { waitJob } from "./support/stack.js";
import { startTcpProxy, type TcpProxy } from "./support/tcp-proxy.js";
import { FETCHED_TOOLS, missingNote, toolsPresent } from "./support/tools.js";

interface JobJson {
  id: string;
  status: string;
  actor_kind: string;
  scheduled_id: string | null;
  created_at: string;
  summary: { snapshot_id?: string } | null;
  error: string | null;
}

const BOOTSTRAP = randomBytes(18).toString("hex");
const pgUrl = process.env.TEST_DATABASE_URL;
const missing = missingNote({
  "PostgreSQL (TEST_DATABASE_URL)": pgUrl !== undefined && pgUrl !== "",
  [FETCHED_TOOLS]: toolsPresent(),
});

function makeTree(files: number, bytes: number): string {
  const dir = mkdtempSync(join(tmpdir(), "fleetback-replica-src-"));
  mkdirSync(join(dir, "docs"));
  for (let i = 0; i < files; i++) {
    writeFileSync(join(dir, "docs", `file-${i}.bin`), randomBytes(bytes));
  }
  return dir;
}

const hostPort = (server: ServerProcess) => new URL(server.listenUrl).host;

/** Lines of one server's output that say the host's agent connected to it. */
const connectsOn = (server: ServerProcess, hostId: string) =>
  server
    .output()
    .split("\n")
    .filter((line) => line.includes('"agent connected"') && line.includes(hostId)).length;

describe.skipIf(missing !== "")(`two server replicas behind a proxy${missing}`, () => {
  let pg: TestPostgres;
  let rest: RestServer;
  let a: ServerProcess;
  let b: ServerProcess;
  let proxy: TcpProxy;
  /** The admin through the proxy (as a browser reaches the fleet), and straight on replica A. */
  let api: Api;
  let onA: Api;
  const agents: AgentRun[] = [];

  beforeAll(async () => {
    pg = await createPostgresDatabase(pgUrl ?? "");
    rest = await startRestServer();
    const proxyPort = await freePort();
    const env = {
      DATABASE_URL: pg.url,
      FLEETBACK_BASE_URL: `http://127.0.0.1:${proxyPort}`,
      FLEETBACK_DATA_DIR: await makeDataDir(),
      FLEETBACK_BOOTSTRAP_TOKEN: BOOTSTRAP,
    };
    // Both at once: the migrations' advisory lock and the key files' atomic creation are shared.
    [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    proxy = await startTcpProxy(proxyPort, [hostPort(b), hostPort(a)]);
    api = await bootstrapAdmin(proxy.url, `/bootstrap?token=${BOOTSTRAP}`);
    onA = createApi(a.listenUrl, api.token);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.stop()));
    await Promise.all([a?.stop(), b?.stop()]);
    await proxy?.close();
    await rest?.stop();
    await pg?.drop();
  });

  async function signInOnA(): Promise<string> {
    const res = await fetch(`${a.listenUrl}/api/auth/login`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: proxy.url },
      body: JSON.stringify(ADMIN),
    });
    expect(res.status).toBe(200);
    return (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  }

  it("A drives a host on B (backup, live stream, tree); B killed mid-backup: the agent moves to A, nothing is lost or doubled", async () => {
    const { hostId, dirs, env, password } = await enrolHost({
      api,
      rest,
      restic: "0.18",
      user: "replica-host",
    });
    const agent = startAgent(["run"], dirs, env);
    agents.push(agent);
    await waitHostReady(api, hostId);
    expect(connectsOn(b, hostId)).toBe(1);
    expect(connectsOn(a, hostId)).toBe(0);
    const { host } = await onA.get<{ host: { status: string; connected: boolean } }>(`/api/hosts/${hostId}`);
    expect(host).toMatchObject({ status: "online", connected: true });

    // A backup started on A, watched live on A, while the agent reports to B.
    const source = makeTree(6, 64 * 1024);
    const group = await onA.send<{ source_group: { id: string } }>(
      "POST",
      `/api/hosts/${hostId}/source-groups`,
      {
        name: "docs",
        includes: [source],
        excludes: [],
        retention_policy: { last: 5 },
      },
    );
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    const groupId = group.body.source_group.id;
    // A slow upload keeps the job running long enough to watch it and, later, to kill B under it.
    expect(
      (await onA.send("PUT", `/api/hosts/${hostId}/bandwidth`, { up_kbps: 128, down_kbps: null })).status,
    ).toBe(200);
    const cookie = await signInOnA();
    const first = await onA.send<{ job_id: string }>(
      "POST",
      `/api/hosts/${hostId}/source-groups/${groupId}/run`,
    );
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const stream = await openStream(`${a.listenUrl}/jobs/${first.body.job_id}/stream`, cookie, proxy.url);
    expect(await stream.ended).toBe(1000);
    const types = stream.messages.map((message) => message.type);
    expect(types[0]).toBe("state");
    expect(types.at(-1)).toBe("job.finished");
    // Live events from B's agent reached the browser on A between the state and the end.
    expect(
      types.filter((type) => type === "job.status" || type === "job.progress" || type === "log.stream")
        .length,
    ).toBeGreaterThan(0);
    expect(stream.messages.at(-1)?.payload).toMatchObject({ status: "succeeded" });
    const done = await waitJob<JobJson>(onA, first.body.job_id);
    const snapshotId = done.summary?.snapshot_id ?? "";
    expect(snapshotId).not.toBe("");

    // The snapshot's tree, browsed on A, is listed by the agent on B.
    await eventually(
      async () => {
        const { snapshots } = await onA.get<{ snapshots: Array<{ id: string }> }>(
          `/api/hosts/${hostId}/snapshots`,
        );
        return snapshots.some((snapshot) => snapshot.id === snapshotId);
      },
      { what: "the snapshot in the cache" },
    );
    const tree = await onA.get<{ entries: Array<{ name: string }> }>(
      `/api/hosts/${hostId}/tree?snapshot_id=${snapshotId}&path=${encodeURIComponent(join(source, "docs"))}`,
    );
    expect(tree.entries.map((entry) => entry.name).sort()).toEqual(
      Array.from({ length: 6 }, (_, i) => `file-${i}.bin`).sort(),
    );

    // A bigger backup, and B killed under it: the agent reconnects through the proxy to A.
    writeFileSync(join(source, "docs", "big.bin"), randomBytes(3 * 2 ** 20));
    const second = await onA.send<{ job_id: string }>(
      "POST",
      `/api/hosts/${hostId}/source-groups/${groupId}/run`,
    );
    expect(second.status).toBe(201);
    await waitProgress(onA, second.body.job_id);
    const killedAt = Date.now();
    await b.stop("SIGKILL");
    await eventually(async () => connectsOn(a, hostId) === 1, {
      what: "the agent to reconnect to A",
      timeoutMs: 60_000,
    });
    // The figure for the issue note (a test asserts behaviour, not speed).
    console.info(`replicas: agent back on A ${Date.now() - killedAt} ms after B was killed`);
    const moved = await waitJob<JobJson>(onA, second.body.job_id, { timeoutMs: 180_000 });
    expect(moved.status, moved.error ?? "").toBe("succeeded");
    const logs = await onA.get<{ lines: Array<{ seq: number }> }>(`/api/jobs/${moved.id}/logs`);
    const seqs = logs.lines.map((line) => line.seq);
    expect(seqs.length).toBeGreaterThan(0);
    expect(new Set(seqs).size).toBe(seqs.length);

    // A schedule after the move: every slot fires one job, on A.
    const schedule = await onA.send<{ schedule: { id: string } }>("POST", `/api/hosts/${hostId}/schedules`, {
      cron: "*/4 * * * * *",
      enabled: true,
      source_group_ids: [groupId],
    });
    expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);
    await onA.send("PUT", `/api/hosts/${hostId}/bandwidth`, { up_kbps: null, down_kbps: null });
    const scheduled = await eventually(
      async () => {
        const { jobs } = await onA.get<{ jobs: JobJson[] }>(`/api/jobs?host_id=${hostId}&kind=backup`);
        const fired = jobs.filter((job) => job.actor_kind === "schedule");
        return fired.some((job) => job.status === "succeeded") ? fired : undefined;
      },
      { what: "a scheduled backup to succeed on A", timeoutMs: 90_000 },
    );
    await onA.send("PUT", `/api/hosts/${hostId}/schedules/${schedule.body.schedule.id}`, {
      cron: "*/4 * * * * *",
      enabled: false,
      source_group_ids: [groupId],
    });
    // Two jobs of one slot would be created milliseconds apart; slots are 4 s apart.
    const times = scheduled.map((job) => Date.parse(job.created_at)).sort((x, y) => x - y);
    for (let i = 1; i < times.length; i++) {
      expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThan(2_000);
    }
    // The repository password never reached either replica's output.
    for (const server of [a, b]) {
      expect(server.output()).not.toContain(password);
    }
  });
});

interface StreamMessage {
  type: string;
  payload: Record<string, unknown>;
}

async function openStream(url: string, cookie: string, origin: string) {
  const ws = new WebSocket(url.replace(/^http/, "ws"), { headers: { Cookie: cookie }, origin });
  const messages: StreamMessage[] = [];
  ws.on("message", (data) => messages.push(JSON.parse(String(data)) as StreamMessage));
  const ended = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return { messages, ended };
}

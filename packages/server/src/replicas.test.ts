/**
 * Two replicas (two runtimes, each on its own port, one database) with a raw agent connected to
 * B and an operator on A: A sees the host online, starts a job that reaches the agent on B, browses
 * its tree through B, watches the job's live stream on A while the agent reports to B, and cancels
 * it from A. Runs on PGlite (one instance, two replicas in a process) and on the real PostgreSQL.
 */
import { randomBytes } from "node:crypto";
import { generateSigningKeyPair } from "@fleetback/crypto";
import { hosts } from "@fleetback/db";
import { createTestDatabase, type TestDatabase, testEngines } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { StreamMessage } from "./job-page/job-stream.js";
import { replaceSnapshots } from "./snapshots/snapshot-store.js";
import { eventually } from "./testing/eventually.js";
import { bindCredentials, readJob, seedHost } from "./testing/seed.js";
import { connectAgent, type TestAgent } from "./testing/test-agent.js";
import { createTestDeps } from "./testing/test-deps.js";
import { startTestServer, type TestServer } from "./testing/test-server.js";

const PASSWORD = "correct horse battery";
const SNAP = "b6926cf4b56e08d52e23b47ed13dc7c0f3ade7f8eabe18b3dd6ca809e77d963a";
const REPO = { url: "rest:http://127.0.0.1:8000/web-1", password: "canary-replica-password-1" };

for (const engine of testEngines()) {
  describe(`two replicas on one database (${engine})`, () => {
    let database: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    let cookie = "";

    beforeAll(async () => {
      database = await createTestDatabase(engine);
      const keys = { secret: new Uint8Array(randomBytes(32)) };
      const releaseKey = generateSigningKeyPair();
      const replica = async () =>
        startTestServer({
          deps: await createTestDeps({
            db: database.db,
            cluster: { pubsub: database.pubsub },
            keys,
            releaseKey,
          }),
        });
      a = await replica();
      b = await replica();
      const origin = new URL(a.deps.config.baseUrl).origin;
      const boot = await fetch(`${a.url}/api/auth/bootstrap`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: origin },
        body: JSON.stringify({
          bootstrap_token: "test-bootstrap-token-0123456789",
          username: "ops",
          password: PASSWORD,
        }),
      });
      expect(boot.status).toBeLessThan(300);
      cookie = (boot.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    }, 120_000);

    afterAll(async () => {
      await a?.close();
      await b?.close();
      await a?.deps.close();
      await b?.deps.close();
      await database?.close();
    });

    const api = (server: TestServer, method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: {
          Cookie: cookie,
          Origin: new URL(server.deps.config.baseUrl).origin,
          "Content-Type": "application/json",
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    async function agentOn(server: TestServer, token: string): Promise<TestAgent> {
      const agent = await connectAgent(server.wsUrl, token);
      agent.hello();
      await agent.waitFor((frame) => frame.type === "schedule.set");
      return agent;
    }

    it("an operator on A drives a host connected to B: online, a job, the tree, the live stream, cancel", async () => {
      const { host, token } = await seedHost(a.deps, { name: "web-1" });
      await bindCredentials(a.deps, host.id, { repo: REPO, admin: REPO });
      await replaceSnapshots(a.deps.db, host.id, {
        refreshed_at: "2026-11-21T11:00:00Z",
        snapshots: [
          {
            id: SNAP,
            short_id: SNAP.slice(0, 8),
            time: "2026-11-21T10:00:00Z",
            hostname: "web-1",
            paths: ["/srv/docs"],
            tags: [],
            size_bytes: 0,
            file_count: 0,
          },
        ],
      });
      const agent = await agentOn(b, token);
      try {
        await eventually(
          async () =>
            (
              (await (await api(a, "GET", `/api/hosts/${host.id}`)).json()) as {
                host: { connected?: boolean };
              }
            ).host,
          (view) => JSON.stringify(view).includes('"connected":true'),
          { what: "A to show the host connected", timeoutMs: 5_000 },
        );

        // The hello on B dispatched the repository's auto-init; the agent finishes it.
        const init = await agent.waitFor((frame) => frame.type === "command.run", 5_000);
        expect(init.payload).toMatchObject({ kind: "init" });
        const initId = (init.payload as { job_id: string }).job_id;
        agent.send("job.finished", { job_id: initId, status: "succeeded", exit_code: 0 });
        await eventually(
          async () => (await readJob(a.deps, initId))?.status,
          (status) => status === "succeeded",
          { what: "the init job to succeed" },
        );

        // A prune started on A goes out through B, the admin credentials it needs first, in order.
        const from = agent.frames.length;
        const started = await api(a, "POST", `/api/hosts/${host.id}/jobs`, { kind: "prune" });
        expect(started.status).toBe(201);
        const { job_id: jobId } = (await started.json()) as { job_id: string };
        const run = await agent.waitFor((frame) => frame.type === "command.run", 5_000, from);
        expect(run.payload).toMatchObject({ job_id: jobId, kind: "prune" });
        const configIndex = agent.frames.findIndex((frame, i) => i >= from && frame.type === "config.update");
        expect(configIndex).toBeGreaterThanOrEqual(from);
        expect(configIndex).toBeLessThan(agent.frames.indexOf(run));

        // The tree, browsed on A, is asked of the agent on B.
        const treeAsked = agent.waitFor((frame) => frame.type === "tree.list", 5_000, agent.frames.length);
        const tree = api(
          a,
          "GET",
          `/api/hosts/${host.id}/tree?snapshot_id=${SNAP}&path=${encodeURIComponent("/srv/docs")}`,
        );
        const ask = await treeAsked;
        agent.send(
          "tree.list.result",
          {
            entries: [
              {
                name: "a.txt",
                path: "/srv/docs/a.txt",
                type: "file",
                size: 3,
                mtime: "2026-11-20T09:00:00Z",
              },
            ],
          },
          ask.id,
        );
        const listing = await tree;
        expect(listing.status).toBe(200);
        expect(
          ((await listing.json()) as { entries: Array<{ name: string }> }).entries.map((e) => e.name),
        ).toEqual(["a.txt"]);

        // The job page's live stream on A, while the agent reports to B.
        const stream = await openStream(
          `${a.url}/jobs/${jobId}/stream`,
          cookie,
          new URL(a.deps.config.baseUrl).origin,
        );
        await eventually(
          () => [...stream.messages],
          (list) => list.length >= 1,
          { what: "the stream's state" },
        );
        const ts = new Date().toISOString();
        agent.send("job.started", { job_id: jobId, kind: "prune", started_at: ts });
        agent.send("log.stream", { job_id: jobId, stream: "stdout", line: "using the repository", ts });
        agent.send("log.stream", { job_id: jobId, stream: "stdout", line: "checking packs", ts });
        await eventually(
          () => stream.messages.map((m) => m.type),
          (types) => types.length >= 4,
          { what: "status and two log lines on A" },
        );
        expect(stream.messages.map((m) => m.type)).toEqual([
          "state",
          "job.status",
          "log.stream",
          "log.stream",
        ]);

        // Cancel on A reaches the agent on B; its answer ends the stream on A.
        const cancelFrom = agent.frames.length;
        const cancelled = await api(a, "POST", `/api/jobs/${jobId}/cancel`);
        expect(cancelled.status).toBeLessThan(300);
        const cancel = await agent.waitFor((frame) => frame.type === "command.cancel", 5_000, cancelFrom);
        expect(cancel.payload).toEqual({ job_id: jobId });
        agent.send("job.finished", { job_id: jobId, status: "cancelled", exit_code: 130 });
        expect(await stream.ended).toBe(1000);
        expect(stream.messages.map((m) => m.type)).toEqual([
          "state",
          "job.status",
          "log.stream",
          "log.stream",
          "job.finished",
        ]);
        expect((await readJob(a.deps, jobId))?.status).toBe("cancelled");
        expect(a.deps.logLines.join("\n") + b.deps.logLines.join("\n")).not.toContain(REPO.password);
      } finally {
        await agent.close();
      }
    });

    it("the host's newest connection wins across replicas, and its end elsewhere does not mark it offline", async () => {
      const { host, token } = await seedHost(a.deps, { name: "web-2" });
      const first = await agentOn(a, token);
      const second = await agentOn(b, token);
      expect((await first.closed).code).toBe(4002);
      await b.deps.hub.settle(host.id);
      await a.deps.hub.settle(host.id);
      await a.channel.idle();
      expect(a.deps.hub.isOnline(host.id)).toBe(true);
      expect((await hostStatusOf(a, host.id)).status).toBe("online");
      await second.close();
      await eventually(
        async () => (await hostStatusOf(a, host.id)).status,
        (status) => status === "offline",
        { what: "the host offline once its last socket closed", timeoutMs: 5_000 },
      );
      expect(a.deps.hub.isOnline(host.id)).toBe(false);
    });
  });
}

async function hostStatusOf(server: TestServer, hostId: string): Promise<{ status: string }> {
  const [row] = await server.deps.db.select({ status: hosts.status }).from(hosts).where(eq(hosts.id, hostId));
  return { status: row?.status ?? "missing" };
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

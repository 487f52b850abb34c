import { hosts } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { eventually } from "../testing/eventually.js";
import { readJob, seedHost, seedJob } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { connectAgent, type TestAgent } from "../testing/test-agent.js";
import { openJobStreamCount, type StreamMessage } from "./job-stream.js";

const PASSWORD = "correct horse battery";

/** A browser's EventSource, reduced to what the tests need: the parsed messages, in order. */
interface StreamClient {
  status: number;
  contentType: string | null;
  messages: StreamMessage[];
  /** Resolves once the server has ended the stream. */
  ended: Promise<void>;
  next(count: number, timeoutMs?: number): Promise<StreamMessage[]>;
  close(): void;
}

async function openStream(url: string, cookie: string | undefined): Promise<StreamClient> {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { Accept: "text/event-stream", ...(cookie ? { Cookie: cookie } : {}) },
    redirect: "manual",
    signal: controller.signal,
  });
  const messages: StreamMessage[] = [];
  let ended: Promise<void> = Promise.resolve();
  if (res.ok && res.body) {
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    ended = (async () => {
      let buffer = "";
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) {
            return;
          }
          buffer += value;
          let cut = buffer.indexOf("\n\n");
          while (cut >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const data = block
              .split("\n")
              .filter((line) => line.startsWith("data: "))
              .map((line) => line.slice("data: ".length))
              .join("\n");
            if (data) {
              messages.push(JSON.parse(data) as StreamMessage);
            }
            cut = buffer.indexOf("\n\n");
          }
        }
      } catch {
        // Aborted by close().
      }
    })();
  }
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    messages,
    ended,
    next: (count, timeoutMs = 5_000) =>
      eventually(
        () => [...messages],
        (list) => list.length >= count,
        { timeoutMs, what: `${count} stream messages` },
      ),
    close: () => controller.abort(),
  };
}

runServerSuite("job page live stream", (server) => {
  let cookie: string | undefined;

  async function login(): Promise<string> {
    if (cookie) {
      return cookie;
    }
    const res = await fetch(`${server.url}/api/auth/bootstrap`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: new URL(server.deps.config.baseUrl).origin },
      body: JSON.stringify({
        bootstrap_token: "test-bootstrap-token-0123456789",
        username: "walker",
        password: PASSWORD,
      }),
    });
    expect(res.status).toBeLessThan(300);
    cookie = (res.headers.get("set-cookie") ?? "").split(";")[0];
    return cookie ?? "";
  }

  async function connected(token: string): Promise<TestAgent> {
    const agent = await connectAgent(server.wsUrl, token);
    agent.hello();
    await agent.waitFor((frame) => frame.type === "schedule.set");
    await server.channel.idle();
    return agent;
  }

  const apiPost = async (path: string) =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Origin: new URL(server.deps.config.baseUrl).origin,
        Cookie: await login(),
      },
    });

  describe("a logged-in browser", () => {
    it("receives the state, then started, progress, log lines and finished in order; then the stream ends", async () => {
      const { host, token } = await seedHost(server.deps);
      const job = await seedJob(server.deps, { hostId: host.id, kind: "backup", actorKind: "user" });
      const agent = await connected(token);
      const stream = await openStream(`${server.url}/jobs/${job.id}/stream`, await login());
      try {
        expect(stream.status).toBe(200);
        expect(stream.contentType).toMatch(/^text\/event-stream/);
        const [state] = await stream.next(1);
        expect(state).toMatchObject({
          type: "state",
          payload: { job: { id: job.id, status: "queued" }, last_seq: 0 },
        });

        const ts = server.deps.clock.now().toISOString();
        agent.send("job.started", { job_id: job.id, kind: "backup", started_at: ts });
        agent.send("job.progress", {
          job_id: job.id,
          percent_done: 0.5,
          files_done: 5,
          files_total: 10,
          bytes_done: 512,
          eta_seconds: 9,
          current_file: "/srv/a.txt",
        });
        agent.send("log.stream", { job_id: job.id, stream: "stdout", line: "first line", ts });
        agent.send("log.stream", { job_id: job.id, stream: "stderr", line: "second line", ts });
        agent.send("job.finished", {
          job_id: job.id,
          status: "succeeded",
          exit_code: 0,
          summary: { files_new: 3, total_bytes_processed: 2048 },
        });
        await stream.ended;
        expect(stream.messages.map((m) => m.type)).toEqual([
          "state",
          "job.status",
          "job.progress",
          "log.stream",
          "log.stream",
          "job.finished",
        ]);
        expect(stream.messages[1]).toMatchObject({ payload: { status: "running" } });
        expect(stream.messages[2]).toMatchObject({
          payload: { percent_done: 0.5, current_file: "/srv/a.txt" },
        });
        expect(stream.messages[3]).toMatchObject({
          payload: { seq: 1, stream: "stdout", line: "first line" },
        });
        expect(stream.messages[4]).toMatchObject({
          payload: { seq: 2, stream: "stderr", line: "second line" },
        });
        expect(stream.messages[5]).toMatchObject({
          type: "job.finished",
          payload: { job_id: job.id, status: "succeeded", exit_code: 0, summary: { files_new: 3 } },
        });
        await eventually(openJobStreamCount, (n) => n === 0, { what: "stream closed on the server" });

        // A late subscriber is told the final state at once, and its stream ends.
        const late = await openStream(`${server.url}/jobs/${job.id}/stream`, await login());
        await late.ended;
        expect(late.messages.map((m) => m.type)).toEqual(["state", "job.finished"]);
        expect(late.messages[0]).toMatchObject({ payload: { last_seq: 2 } });
        expect(late.messages[1]).toMatchObject({
          payload: { job_id: job.id, status: "succeeded", exit_code: 0, summary: { files_new: 3 } },
        });
      } finally {
        stream.close();
        await agent.close();
      }
    });

    it("stops listening when the browser goes away", async () => {
      const { host } = await seedHost(server.deps);
      const job = await seedJob(server.deps, { hostId: host.id, kind: "check", actorKind: "user" });
      const before = openJobStreamCount();
      const stream = await openStream(`${server.url}/jobs/${job.id}/stream`, await login());
      await stream.next(1);
      expect(openJobStreamCount()).toBe(before + 1);
      stream.close();
      await eventually(openJobStreamCount, (n) => n === before, { what: "stream released" });
    });
  });

  describe("refusals", () => {
    it("refuses a stream without a session and answers 404 for an unknown job", async () => {
      const { host } = await seedHost(server.deps);
      const job = await seedJob(server.deps, { hostId: host.id, kind: "check", actorKind: "user" });
      const anonymous = await openStream(`${server.url}/jobs/${job.id}/stream`, undefined);
      expect(anonymous.status).toBe(303);
      expect(anonymous.contentType).not.toMatch(/event-stream/);
      const forged = await openStream(`${server.url}/jobs/${job.id}/stream`, "fleetback_session=forged");
      expect(forged.status).toBe(303);
      const unknown = await openStream(`${server.url}/jobs/01JD0000000000000000000000/stream`, await login());
      expect(unknown.status).toBe(404);
    });
  });

  describe("cancel", () => {
    it("sends command.cancel to the connected agent; the status follows the agent's job.finished", async () => {
      const { host, token } = await seedHost(server.deps);
      const job = await seedJob(server.deps, { hostId: host.id, kind: "backup", actorKind: "user" });
      const agent = await connected(token);
      try {
        const stream = await openStream(`${server.url}/jobs/${job.id}/stream`, await login());
        await stream.next(1);
        const from = agent.frames.length;
        const res = await apiPost(`/api/jobs/${job.id}/cancel`);
        expect(res.status).toBe(202);
        expect(await res.json()).toEqual({ job_id: job.id, status: "queued", cancel_sent: true });
        const cancel = await agent.waitFor((frame) => frame.type === "command.cancel", 5_000, from);
        expect(cancel.payload).toEqual({ job_id: job.id });
        expect(await readJob(server.deps, job.id)).toMatchObject({ status: "queued" });

        agent.send("job.finished", { job_id: job.id, status: "cancelled", exit_code: null });
        await stream.ended;
        expect(stream.messages.at(-1)).toMatchObject({
          type: "job.finished",
          payload: { status: "cancelled" },
        });
        expect(await readJob(server.deps, job.id)).toMatchObject({ status: "cancelled" });

        const again = await apiPost(`/api/jobs/${job.id}/cancel`);
        expect(again.status).toBe(409);
        expect(agent.frames.filter((f) => f.type === "command.cancel")).toHaveLength(1);
      } finally {
        await agent.close();
      }
    });

    it("cancels a queued job of an offline host itself and tells the live stream", async () => {
      const { host } = await seedHost(server.deps);
      await server.deps.db.update(hosts).set({ status: "offline" }).where(eq(hosts.id, host.id));
      const job = await seedJob(server.deps, { hostId: host.id, kind: "backup", actorKind: "user" });
      const stream = await openStream(`${server.url}/jobs/${job.id}/stream`, await login());
      await stream.next(1);
      const res = await apiPost(`/api/jobs/${job.id}/cancel`);
      expect(res.status).toBe(200);
      await stream.ended;
      expect(stream.messages.map((m) => m.type)).toEqual(["state", "job.finished"]);
      expect(stream.messages[1]).toMatchObject({ payload: { status: "cancelled", exit_code: null } });
    });
  });
});

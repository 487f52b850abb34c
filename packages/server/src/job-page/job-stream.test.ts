import { hosts } from "@fleetback/db";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { eventually } from "../testing/eventually.js";
import { readJob, seedHost, seedJob } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { connectSettledAgent } from "../testing/test-agent.js";
import { startTestServer } from "../testing/test-server.js";
import { REAUTHORISE_MS, type StreamMessage } from "./job-stream.js";

const CHANGE_LINE = '{"message_type":"change","path":"/etc/hosts","modifier":"+"}';
const RETRY_TEXT =
  'Stat(<config/>) returned error, retrying after 2.3s: Head "http://127.0.0.1:1/config": dial tcp 127.0.0.1:1: connect: connection refused';

const PASSWORD = "correct horse battery";

/** A browser's WebSocket, reduced to what the tests need: the parsed messages, in order. */
interface StreamClient {
  /** 101 when the socket opened, else the HTTP status of the refusal. */
  status: number;
  messages: StreamMessage[];
  /** Resolves with the close code once the socket is closed. */
  ended: Promise<number>;
  /** The close reason, once closed. */
  reason(): string;
  next(count: number, timeoutMs?: number): Promise<StreamMessage[]>;
  close(): void;
}

async function openStream(
  url: string,
  cookie: string | undefined,
  origin: string | undefined,
): Promise<StreamClient> {
  const headers: Record<string, string> = {};
  if (cookie) {
    headers.Cookie = cookie;
  }
  const ws = new WebSocket(url.replace(/^http/, "ws"), { headers, ...(origin ? { origin } : {}) });
  const messages: StreamMessage[] = [];
  ws.on("message", (data) => {
    messages.push(JSON.parse(String(data)) as StreamMessage);
  });
  let reason = "";
  const ended = new Promise<number>((resolve) =>
    ws.once("close", (code, why) => {
      reason = String(why);
      resolve(code);
    }),
  );
  const status = await new Promise<number>((resolve) => {
    ws.once("open", () => resolve(101));
    ws.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      ws.terminate();
    });
    ws.once("error", () => resolve(0));
  });
  return {
    status,
    messages,
    ended,
    reason: () => reason,
    next: (count, timeoutMs = 5_000) =>
      eventually(
        () => [...messages],
        (list) => list.length >= count,
        { timeoutMs, what: `${count} stream messages` },
      ),
    close: () => ws.close(),
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

  const origin = () => new URL(server.deps.config.baseUrl).origin;

  /** A session of its own (the shared one must outlive a test that signs out). */
  async function signIn(url: string): Promise<string> {
    await login();
    const res = await fetch(`${url}/api/auth/login`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: origin() },
      body: JSON.stringify({ username: "walker", password: PASSWORD }),
    });
    expect(res.status).toBe(200);
    return (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  }

  const connected = (token: string) => connectSettledAgent(server, token);

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
      const stream = await openStream(`${server.url}/jobs/${job.id}/stream`, await login(), origin());
      try {
        expect(stream.status).toBe(101);
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
        agent.send("log.stream", { job_id: job.id, stream: "stdout", line: CHANGE_LINE, ts });
        agent.send("log.stream", { job_id: job.id, stream: "stderr", line: RETRY_TEXT, ts });
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
          payload: { seq: 2, stream: "stderr", line: "second line", text: "second line", retry: false },
        });
        // restic's JSON reads as a sentence, the line itself one click away; retries are flagged.
        expect(stream.messages[5]).toMatchObject({
          payload: { seq: 3, text: "+ /etc/hosts (added)", raw: CHANGE_LINE, retry: false },
        });
        expect(stream.messages[6]).toMatchObject({ payload: { seq: 4, line: RETRY_TEXT, retry: true } });
        expect(stream.messages[7]).toMatchObject({
          type: "job.finished",
          payload: {
            job_id: job.id,
            status: "succeeded",
            exit_code: 0,
            summary: { files_new: 3 },
            summary_rows: [
              { key: "files_new", label: "New files", value: "3" },
              { key: "total_bytes_processed", label: "Data processed", value: "2.00 KiB" },
            ],
          },
        });
        expect(await stream.ended).toBe(1000);
        await eventually(
          () => server.jobStreams.count(),
          (n) => n === 0,
          { what: "stream closed on the server" },
        );

        // A late subscriber is told the final state at once, and its stream ends.
        const late = await openStream(`${server.url}/jobs/${job.id}/stream`, await login(), origin());
        await late.ended;
        expect(late.messages.map((m) => m.type)).toEqual(["state", "job.finished"]);
        expect(late.messages[0]).toMatchObject({ payload: { last_seq: 4 } });
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
      const before = server.jobStreams.count();
      const stream = await openStream(`${server.url}/jobs/${job.id}/stream`, await login(), origin());
      await stream.next(1);
      expect(server.jobStreams.count()).toBe(before + 1);
      stream.close();
      await eventually(
        () => server.jobStreams.count(),
        (n) => n === before,
        { what: "stream released" },
      );
    });
  });

  describe("after it opened", () => {
    it("ends the stream with 4401 once the session is signed out, and keeps it while it is valid", async () => {
      const authorised: number[] = [];
      const quick = await startTestServer({
        deps: server.deps,
        jobStreams: { reauthoriseMs: 50, onAuthorised: (status) => authorised.push(status) },
      });
      try {
        const { host } = await seedHost(server.deps);
        const job = await seedJob(server.deps, { hostId: host.id, kind: "check", actorKind: "user" });
        const session = await signIn(quick.url);
        const stream = await openStream(`${quick.url}/jobs/${job.id}/stream`, session, origin());
        expect(stream.status).toBe(101);
        await stream.next(1);
        // The upgrade's authorisation, then several re-authorisations pass while the session is valid.
        await eventually(
          () => authorised.length,
          (n) => n >= 4,
          { what: "three re-authorisations" },
        );
        expect(authorised.every((status) => status === 426)).toBe(true);
        expect(quick.jobStreams.count()).toBe(1);
        const out = await fetch(`${quick.url}/api/auth/logout`, {
          method: "POST",
          headers: { "Content-Type": "application/json", Origin: origin(), Cookie: session },
        });
        expect(out.status).toBeLessThan(300);
        expect(await stream.ended).toBe(4401);
        expect(stream.reason()).toBe("log in to follow this job");
        await eventually(
          () => quick.jobStreams.count(),
          (n) => n === 0,
          { what: "stream released" },
        );
      } finally {
        await quick.close();
      }
    });

    it("ends the stream with 4404 when the job goes with its host, at the next re-authorisation", async () => {
      // The test's timers: the re-authorisation runs when the test moves them, not after a wait.
      const timers = createManualTimers();
      const quick = await startTestServer({ deps: server.deps, jobStreams: { timers } });
      try {
        const { host } = await seedHost(server.deps);
        const job = await seedJob(server.deps, { hostId: host.id, kind: "check", actorKind: "user" });
        const stream = await openStream(
          `${quick.url}/jobs/${job.id}/stream`,
          await signIn(quick.url),
          origin(),
        );
        await stream.next(1);
        await server.deps.db.delete(hosts).where(eq(hosts.id, host.id));
        timers.advance(REAUTHORISE_MS);
        expect(await stream.ended).toBe(4404);
      } finally {
        await quick.close();
      }
    });
  });

  describe("refusals", () => {
    it("refuses a page of another site even with a valid session (cross-site WebSocket hijacking)", async () => {
      const { host } = await seedHost(server.deps);
      const job = await seedJob(server.deps, { hostId: host.id, kind: "check", actorKind: "user" });
      const foreign = await openStream(
        `${server.url}/jobs/${job.id}/stream`,
        await login(),
        "https://evil.example",
      );
      expect(foreign.status).toBe(403);
      expect(foreign.messages).toEqual([]);
    });

    it("answers a plain GET with 426 to a viewer, so only the upgrade streams", async () => {
      const { host } = await seedHost(server.deps);
      const job = await seedJob(server.deps, { hostId: host.id, kind: "check", actorKind: "user" });
      const res = await fetch(`${server.url}/jobs/${job.id}/stream`, { headers: { Cookie: await login() } });
      expect(res.status).toBe(426);
      expect(await res.json()).toMatchObject({ code: "upgrade_required" });
    });

    it("refuses a stream without a session and answers 404 for an unknown job", async () => {
      const { host } = await seedHost(server.deps);
      const job = await seedJob(server.deps, { hostId: host.id, kind: "check", actorKind: "user" });
      const anonymous = await openStream(`${server.url}/jobs/${job.id}/stream`, undefined, origin());
      expect(anonymous.status).toBe(401);
      expect(anonymous.messages).toEqual([]);
      const forged = await openStream(
        `${server.url}/jobs/${job.id}/stream`,
        "fleetback_session=forged",
        origin(),
      );
      expect(forged.status).toBe(401);
      const unknown = await openStream(
        `${server.url}/jobs/01JD0000000000000000000000/stream`,
        await login(),
        origin(),
      );
      expect(unknown.status).toBe(404);
    });
  });

  describe("cancel", () => {
    it("sends command.cancel to the connected agent; the status follows the agent's job.finished", async () => {
      const { host, token } = await seedHost(server.deps);
      const job = await seedJob(server.deps, { hostId: host.id, kind: "backup", actorKind: "user" });
      const agent = await connected(token);
      try {
        const stream = await openStream(`${server.url}/jobs/${job.id}/stream`, await login(), origin());
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
      const stream = await openStream(`${server.url}/jobs/${job.id}/stream`, await login(), origin());
      await stream.next(1);
      const res = await apiPost(`/api/jobs/${job.id}/cancel`);
      expect(res.status).toBe(200);
      await stream.ended;
      expect(stream.messages.map((m) => m.type)).toEqual(["state", "job.finished"]);
      expect(stream.messages[1]).toMatchObject({ payload: { status: "cancelled", exit_code: null } });
    });
  });
});

import { hosts, type NewHost } from "@fleetback/db";
import { encode, MAX_FRAME_BYTES } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { ulid } from "ulidx";
import { describe, expect, it } from "vitest";
import { eventually } from "../testing/eventually.js";
import { readHost, seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { connectAgent, connectOnlineAgent } from "../testing/test-agent.js";
import { startTestServer } from "../testing/test-server.js";

runServerSuite("agent channel: connection life", (server) => {
  /** A new host (with `fields`) whose agent has said hello and been sent its schedule. */
  async function onlineHost(fields: Partial<NewHost> = {}) {
    const { host, token } = await seedHost(server.deps, fields);
    return { host, token, agent: await connectOnlineAgent(server.wsUrl, token) };
  }

  describe("connection life", () => {
    it("lets a second connection evict the first with 4002 while the host stays online", async () => {
      const { host, token } = await seedHost(server.deps);
      const first = await connectAgent(server.wsUrl, token);
      first.hello();
      await first.frame(1);
      const second = await connectAgent(server.wsUrl, token);
      second.hello();
      expect(await first.closed).toEqual({ code: 4002, reason: "replaced by a newer connection" });
      await second.frame(1);
      await server.channel.idle();
      expect(server.deps.hub.isOnline(host.id)).toBe(true);
      expect((await readHost(server.deps, host.id))?.status).toBe("online");
      await second.close();
    });

    it("marks the host offline as soon as its socket closes", async () => {
      const { host, agent } = await onlineHost();
      await agent.close();
      await eventually(
        async () => (await readHost(server.deps, host.id))?.status,
        (status) => status === "offline",
        { what: "host offline" },
      );
      expect(server.deps.hub.isOnline(host.id)).toBe(false);
    });

    it("touches last_seen_at on heartbeat", async () => {
      const { host, agent } = await onlineHost();
      server.deps.clock.advance(30_000);
      const expected = server.deps.clock.now();
      agent.send("heartbeat", { running_job_ids: [] });
      await eventually(
        async () => (await readHost(server.deps, host.id))?.lastSeenAt?.getTime(),
        (seen) => seen === expected.getTime(),
        { what: "last_seen_at updated" },
      );
      await agent.close();
    });

    it("records schedule.ack, but not a version the server never sent", async () => {
      const { host, agent } = await onlineHost({ scheduleVersion: 4 });
      agent.send("schedule.ack", { version: 9 });
      agent.send("schedule.ack", { version: 4 });
      await eventually(
        async () => (await readHost(server.deps, host.id))?.scheduleAckedVersion,
        (version) => version === 4,
        { what: "acked version" },
      );
      await agent.close();
    });

    it("hands a tree.list.result to the request waiting for it", async () => {
      const { host, agent } = await onlineHost();
      const reply = server.deps.hub.request(
        host.id,
        "tree.list",
        { snapshot_id: "abcdef12", path: "/etc" },
        "tree.list.result",
        5_000,
      );
      const request = await agent.waitFor((frame) => frame.type === "tree.list");
      agent.send("tree.list.result", { entries: [] }, request.id);
      expect((await reply).payload).toEqual({ entries: [] });
      // A reply nobody waits for is dropped: said in the log, and nothing goes back to the agent.
      const framesBefore = agent.frames.length;
      agent.send("tree.list.result", { error: "late" }, request.id);
      await eventually(
        () =>
          server.deps.logLines.filter(
            (line) =>
              line.includes(request.id) && line.includes("tree.list.result nobody waits for; dropped"),
          ).length,
        (n) => n === 1,
        { what: "the late reply logged as dropped" },
      );
      // Any answer to the late reply went out before the answer to a frame sent after it was handled.
      const probe = ulid();
      agent.sendRaw(JSON.stringify({ id: probe, type: "no.such.type", payload: {} }));
      const answer = await agent.waitFor((frame) => frame.type === "error", 5_000, framesBefore);
      expect(answer.payload).toMatchObject({ code: "unknown_type", request_id: probe });
      expect(agent.frames.slice(framesBefore)).toEqual([answer]);
      expect(server.deps.hub.isOnline(host.id)).toBe(true);
      await agent.close();
    });

    it("hands over a tree.list.result while the host's earlier messages still wait for the database", async () => {
      const { host, agent } = await onlineHost();
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked = () => {};
      const lockTaken = new Promise<void>((resolve) => {
        locked = resolve;
      });
      // The host's row held, as a long catalogue part holds the database: the heartbeat waits.
      const holder = server.deps.db.transaction(async (tx) => {
        await tx.select({ id: hosts.id }).from(hosts).where(eq(hosts.id, host.id)).for("update");
        locked();
        await held;
      });
      try {
        await lockTaken;
        const reply = server.deps.hub.request(
          host.id,
          "tree.list",
          { snapshot_id: "abcdef12", path: "/etc" },
          "tree.list.result",
          5_000,
        );
        const request = await agent.waitFor((frame) => frame.type === "tree.list");
        server.deps.clock.advance(30_000);
        const seen = server.deps.clock.now().getTime();
        agent.send("heartbeat", { running_job_ids: [] });
        agent.send("tree.list.result", { entries: [] }, request.id);
        expect((await reply).payload).toEqual({ entries: [] });
        release();
        await holder;
        // The heartbeat sent before it still lands once the database is free.
        await eventually(
          async () => (await readHost(server.deps, host.id))?.lastSeenAt?.getTime(),
          (at) => at === seen,
          { what: "the heartbeat recorded" },
        );
      } finally {
        release();
        await holder;
      }
      await agent.close();
    });
  });

  describe("schedule fires it cannot act on", () => {
    it("says in the log that a fire of an unknown schedule was dropped", async () => {
      const { host, agent } = await onlineHost();
      agent.send("schedule.fire", { schedule_id: ulid(), scheduled_at: "2026-11-21T12:00:00Z" });
      await eventually(
        () =>
          server.deps.logLines.filter(
            (line) => line.includes(host.id) && line.includes("schedule.fire for no schedule of this host"),
          ).length,
        (n) => n === 1,
      );
      await agent.close();
    });
  });

  describe("shutdown", () => {
    it("closes agent sockets with 1001 and marks their hosts offline", async () => {
      const other = await startTestServer({ deps: server.deps });
      const { host, token } = await seedHost(server.deps);
      const agent = await connectAgent(other.wsUrl, token);
      agent.hello();
      await agent.frame(1);
      await other.close();
      expect((await agent.closed).code).toBe(1001);
      expect((await readHost(server.deps, host.id))?.status).toBe("offline");
    });
  });

  describe("invalid frames", () => {
    it("answers frames before hello with invalid_message and keeps waiting for hello", async () => {
      const { token } = await seedHost(server.deps);
      const agent = await connectAgent(server.wsUrl, token);
      const id = ulid();
      agent.send("heartbeat", { running_job_ids: [] }, id);
      expect((await agent.frame(0)).payload).toMatchObject({ code: "invalid_message", request_id: id });
      agent.hello();
      expect((await agent.frame(2)).type).toBe("schedule.set");
      await agent.close();
    });

    it("answers an unknown type with unknown_type and the frame's id", async () => {
      const { agent } = await onlineHost();
      const id = ulid();
      agent.sendRaw(JSON.stringify({ id, type: "snapshot.delete", payload: {} }));
      expect((await agent.frame(2)).payload).toMatchObject({ code: "unknown_type", request_id: id });
      await agent.close();
    });

    it("answers a frame over 1 MiB with invalid_message and keeps the connection", async () => {
      const { host, agent } = await onlineHost();
      const padding = "x".repeat(MAX_FRAME_BYTES + 1024);
      agent.sendRaw(encode("heartbeat", { running_job_ids: [] }).replace("}}", `},"pad":"${padding}"}`));
      expect((await agent.frame(2)).payload).toMatchObject({ code: "invalid_message" });
      server.deps.clock.advance(1_000);
      agent.send("heartbeat", { running_job_ids: [] });
      await eventually(
        async () => (await readHost(server.deps, host.id))?.lastSeenAt?.getTime(),
        (seen) => seen === server.deps.clock.now().getTime(),
        { what: "heartbeat after the oversize frame" },
      );
      expect(agent.ws.readyState).toBe(agent.ws.OPEN);
      await agent.close();
    });

    it("answers a text frame that is not UTF-8 with invalid_message and keeps the connection", async () => {
      const { agent } = await onlineHost();
      agent.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
      expect((await agent.frame(2)).payload).toMatchObject({
        code: "invalid_message",
        message: expect.stringMatching(/UTF-8/),
      });
      agent.sendRaw("still here?");
      expect((await agent.frame(3)).payload).toMatchObject({ code: "invalid_message" });
      await agent.close();
    });

    it("closes with 4008 after 20 invalid frames, and still serves the next connection", async () => {
      const { token, agent } = await onlineHost();
      for (let i = 0; i < 20; i++) {
        agent.sendRaw(`garbage ${i}`);
      }
      expect(await agent.closed).toEqual({ code: 4008, reason: "too many invalid frames" });
      expect(agent.frames.filter((frame) => frame.type === "error")).toHaveLength(20);

      const next = await connectAgent(server.wsUrl, token);
      next.hello();
      expect((await next.frame(1)).type).toBe("schedule.set");
      await next.close();
    });
  });
});

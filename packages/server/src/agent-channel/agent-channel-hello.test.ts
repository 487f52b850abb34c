import { hosts, scheduleSourceGroups, schedules, sourceGroups } from "@fleetback/db";
import { PROTOCOL_VERSION } from "@fleetback/protocol";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { eq } from "drizzle-orm";
import { ulid } from "ulidx";
import { describe, expect, it } from "vitest";
import { eventually } from "../testing/eventually.js";
import { bindCredentials, readHost, seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { connectAgent, refusedUpgrade } from "../testing/test-agent.js";
import { startTestServer } from "../testing/test-server.js";

const repo = { url: "rest:https://backup.example:8000/web-1", username: "web-1", password: "repo-secret-1" };
const admin = {
  url: "rest:https://backup.example:8000/web-1",
  username: "admin",
  password: "admin-secret-2",
};

runServerSuite("agent channel: upgrade and hello", (server) => {
  describe("upgrade", () => {
    it("refuses an upgrade without a bearer: HTTP 401 with the contract's body", async () => {
      const refused = await refusedUpgrade(server.wsUrl);
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body)).toMatchObject({ code: "unauthorised", message: expect.any(String) });
    });

    it("refuses an unknown token and a revoked one", async () => {
      const unknown = await refusedUpgrade(server.wsUrl, { authorization: "Bearer fba_not-a-real-token" });
      expect(unknown.status).toBe(401);
      const { host, token } = await seedHost(server.deps);
      await server.deps.db.update(hosts).set({ agentTokenHash: null }).where(eq(hosts.id, host.id));
      const revoked = await refusedUpgrade(server.wsUrl, { authorization: `Bearer ${token}` });
      expect(revoked.status).toBe(401);
      expect(JSON.parse(revoked.body).code).toBe("unauthorised");
      expect(server.deps.logLines.join("\n")).not.toContain(token);
    });
  });

  describe("hello", () => {
    it("closes with 4000 a socket that sent no hello for exactly 10 s: open at 9.999 s, closed at 10 s", async () => {
      const timers = createManualTimers();
      const quick = await startTestServer({ deps: server.deps, channel: { timers } });
      try {
        const { token } = await seedHost(server.deps);
        const agent = await connectAgent(quick.wsUrl, token);
        await eventually(
          () => timers.pending(),
          (n) => n > 0,
          { what: "hello deadline armed" },
        );
        // The contract's 10 s (HELLO_DEADLINE_MS), written out here rather than read from the code.
        expect(timers.pendingDelays()).toEqual([10_000]);
        timers.advance(9_999);
        // A ping answered proves the socket is still open: a close frame sent before would come first.
        const pong = new Promise<string>((resolve) => agent.ws.once("pong", () => resolve("pong")));
        agent.ws.ping();
        expect(await Promise.race([pong, agent.closed.then(() => "closed")])).toBe("pong");
        timers.advance(1);
        expect(await agent.closed).toEqual({ code: 4000, reason: "no hello in time" });
      } finally {
        await quick.close();
      }
    });

    it("answers protocol 0 with ErrProtocolTooOld and a help URL, then closes 4001", async () => {
      const { host, token } = await seedHost(server.deps);
      const agent = await connectAgent(server.wsUrl, token);
      agent.hello({ protocol_version: 0 });
      const error = await agent.frame(0);
      expect(error).toMatchObject({
        type: "error",
        payload: {
          code: "ErrProtocolTooOld",
          help_url: `${server.deps.config.baseUrl}/docs/agent-upgrade`,
        },
      });
      expect((await agent.closed).code).toBe(4001);
      expect((await readHost(server.deps, host.id))?.status).toBe("offline");
    });

    it("recognises a too-old hello even when today's schema refuses its shape", async () => {
      const { token } = await seedHost(server.deps);
      const agent = await connectAgent(server.wsUrl, token);
      agent.sendRaw(
        JSON.stringify({ id: ulid(), type: "hello", payload: { protocol_version: 0, version: "0.0.1" } }),
      );
      expect((await agent.frame(0)).payload).toMatchObject({ code: "ErrProtocolTooOld" });
      expect((await agent.closed).code).toBe(4001);
    });

    it("stores the hello and pushes repo, admin, caps and schedule.set in that order", async () => {
      const { host, token } = await seedHost(server.deps, { bandwidthUpKbps: 512, scheduleVersion: 3 });
      await bindCredentials(server.deps, host.id, { repo, admin });
      const groupId = ulid();
      const [daily, weekly] = [ulid(), ulid()];
      await server.deps.db
        .insert(sourceGroups)
        .values({ id: groupId, hostId: host.id, name: "etc", includes: ["/etc"] });
      await server.deps.db.insert(schedules).values([
        { id: daily, hostId: host.id, cron: "0 2 * * *", enabled: true },
        { id: weekly, hostId: host.id, cron: "0 3 * * 0", enabled: false },
      ]);
      await server.deps.db.insert(scheduleSourceGroups).values({ scheduleId: daily, sourceGroupId: groupId });
      const agent = await connectAgent(server.wsUrl, token);
      agent.hello({ hostname: "web-1.example", agent_version: "0.2.0", tool_version: "0.18.1" });

      const first = await Promise.all([0, 1, 2, 3].map((index) => agent.frame(index)));
      expect(first.map((frame) => [frame.type, frame.payload])).toEqual([
        ["config.update", { slot: "repo", repository: repo }],
        ["config.update", { slot: "admin", repository: admin }],
        ["config.update", { caps: { bandwidth_up_kbps: 512, bandwidth_down_kbps: null } }],
        [
          "schedule.set",
          {
            version: 3,
            schedules: expect.arrayContaining([
              { id: daily, cron: "0 2 * * *", enabled: true, source_groups: [groupId] },
              { id: weekly, cron: "0 3 * * 0", enabled: false, source_groups: [] },
            ]),
          },
        ],
      ]);
      const stored = await readHost(server.deps, host.id);
      expect(stored).toMatchObject({
        status: "online",
        // The name stays the enrolled one; what the agent calls the host is stored beside it.
        name: "web-1",
        reportedHostname: "web-1.example",
        agentVersion: "0.2.0",
        toolVersion: "0.18.1",
        protocolVersion: PROTOCOL_VERSION,
        lastSeenAt: server.deps.clock.now(),
      });
      const lines = server.deps.logLines.join("\n");
      expect(lines).not.toContain(repo.password);
      expect(lines).not.toContain(admin.password);
      await agent.close();
    });

    it("pushes only caps and schedule.set when no credentials are bound, and nothing else", async () => {
      const { token } = await seedHost(server.deps);
      const agent = await connectAgent(server.wsUrl, token);
      agent.hello();
      await agent.frame(1);
      await server.channel.idle();
      expect(agent.frames.map((frame) => frame.type)).toEqual(["config.update", "schedule.set"]);
      expect(agent.frames[0]?.payload).toEqual({
        caps: { bandwidth_up_kbps: null, bandwidth_down_kbps: null },
      });
      expect(agent.frames[1]?.payload).toEqual({ version: 0, schedules: [] });
      await agent.close();
    });

    it("holds a hub.send issued during the initial push until after schedule.set", async () => {
      const { host, token } = await seedHost(server.deps);
      await bindCredentials(server.deps, host.id, { admin });
      const hub = server.deps.hub;
      const register = hub.register;
      const jobId = ulid();
      hub.register = (connection) => {
        const previous = register(connection);
        expect(hub.send(host.id, "command.cancel", { job_id: jobId })).toBe(true);
        return previous;
      };
      try {
        const agent = await connectAgent(server.wsUrl, token);
        agent.hello();
        await agent.frame(3);
        expect(agent.frames.map((frame) => frame.type)).toEqual([
          "config.update",
          "config.update",
          "schedule.set",
          "command.cancel",
        ]);
        await agent.close();
      } finally {
        hub.register = register;
      }
    });
  });
});

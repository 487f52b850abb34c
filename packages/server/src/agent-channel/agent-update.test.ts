/**
 * Agent self-update over real sockets, on both engines: a hello of an older agent while an update
 * is pending gets command.update after the initial push (state sent); a hello with the requested
 * version marks it succeeded; update.result moves the state, from the current socket only; a
 * hello refused as too old is remembered for the host page; the release key is handed to agents.
 */

import { encodePublicKey } from "@fleetback/crypto";
import { alerts, hosts } from "@fleetback/db";
import type { Hello } from "@fleetback/protocol";
import { and, eq, isNull } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../agent-artifacts/signed-file.js";
import { eventually } from "../testing/eventually.js";
import { readHost, seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { connectAgent } from "../testing/test-agent.js";

const BUNDLE = new TextEncoder().encode("// fleetback-agent 3.0.0\nconsole.log('agent 3');\n");
const SEA = new Uint8Array([0x4d, 0x5a, 3, 0, 0]);

runServerSuite("agent channel: self-update", (server) => {
  async function requestUpdate(hostId: string, state: "pending" | "sent" | "restarting" = "pending") {
    if (!(await server.deps.agentBundles.read("3.0.0")).ok) {
      await server.deps.agentBundles.add("3.0.0", BUNDLE);
      await server.deps.agentBundles.addSea("3.0.0", "win32", "x64", SEA);
    }
    await server.deps.db
      .update(hosts)
      .set({ updateVersion: "3.0.0", updateState: state, updateRequestedAt: server.deps.clock.now() })
      .where(eq(hosts.id, hostId));
  }

  /**
   * A host on 2.0.0 whose update to 3.0.0 is in `state` says `hello`: once the channel has handled
   * it, the agent has been sent no command.update.
   */
  async function helloGettingNoUpdate(state: "pending" | "restarting", hello: Partial<Hello>) {
    const { host, token } = await seedHost(server.deps, { agentVersion: "2.0.0" });
    await requestUpdate(host.id, state);
    const agent = await connectAgent(server.wsUrl, token);
    agent.hello(hello);
    await agent.frame(1);
    await server.channel.idle();
    expect(agent.frames.map((frame) => frame.type)).not.toContain("command.update");
    return { host, agent };
  }

  describe("hello", () => {
    it("sends command.update to a host whose update is pending, after the initial push", async () => {
      const { host, token } = await seedHost(server.deps, { agentVersion: "2.0.0" });
      await requestUpdate(host.id);
      const agent = await connectAgent(server.wsUrl, token);
      agent.hello({ agent_version: "2.0.0" });
      const update = await agent.waitFor((frame) => frame.type === "command.update");
      expect(agent.frames.map((frame) => frame.type)).toEqual([
        "config.update",
        "schedule.set",
        "command.update",
      ]);
      expect(update.payload).toMatchObject({
        version: "3.0.0",
        url: `${server.deps.config.baseUrl}/install/agent/3.0.0`,
        sha256: sha256Hex(BUNDLE),
      });
      await server.channel.idle();
      expect(await readHost(server.deps, host.id)).toMatchObject({
        updateState: "sent",
        agentKind: "bundle",
      });
      await agent.close();
    });

    it("sends a SEA host its platform's executable and stores the agent kind", async () => {
      const { host, token } = await seedHost(server.deps, { agentVersion: "2.0.0" });
      await requestUpdate(host.id, "sent");
      const agent = await connectAgent(server.wsUrl, token);
      agent.hello({ agent_version: "2.0.0", agent_kind: "sea", os: "win32", arch: "x64" });
      const update = await agent.waitFor((frame) => frame.type === "command.update");
      expect(update.payload).toMatchObject({
        url: `${server.deps.config.baseUrl}/install/agent/3.0.0/win32-x64`,
        sha256: sha256Hex(SEA),
      });
      await server.channel.idle();
      expect(await readHost(server.deps, host.id)).toMatchObject({ agentKind: "sea", updateState: "sent" });
      await agent.close();
    });

    it("fails a SEA host's update when its platform has no executable, and sends nothing", async () => {
      const { host, agent } = await helloGettingNoUpdate("pending", {
        agent_version: "2.0.0",
        agent_kind: "sea",
        os: "linux",
        arch: "riscv64",
      });
      expect(await readHost(server.deps, host.id)).toMatchObject({
        updateState: "failed",
        updateError: expect.stringContaining("linux-riscv64"),
      });
      await agent.close();
    });

    it("marks the update succeeded when the agent says hello with the requested version", async () => {
      const { host, agent } = await helloGettingNoUpdate("restarting", { agent_version: "3.0.0" });
      expect(await readHost(server.deps, host.id)).toMatchObject({
        agentVersion: "3.0.0",
        updateState: "succeeded",
        updateError: null,
        updateStateAt: server.deps.clock.now(),
      });
      await agent.close();
    });

    it("fails, without resending, an update whose agent restarted as another version; its report wins", async () => {
      const { host, agent } = await helloGettingNoUpdate("restarting", { agent_version: "2.0.0" });
      expect(await readHost(server.deps, host.id)).toMatchObject({
        updateState: "failed",
        updateError: "the agent restarted as 2.0.0, not 3.0.0",
      });
      agent.send("update.result", { version: "3.0.0", status: "rolled_back", error: "crashed on start" });
      await eventually(
        () => readHost(server.deps, host.id),
        (row) => row?.updateState === "rolled_back",
        { what: "the rollback report replaces the failure" },
      );
      expect((await readHost(server.deps, host.id))?.updateError).toBe("crashed on start");
      await agent.close();
    });

    it("remembers a hello refused as too old, and forgets it once a hello is accepted", async () => {
      const { host, token } = await seedHost(server.deps);
      const old = await connectAgent(server.wsUrl, token);
      old.hello({ protocol_version: 0 });
      expect((await old.closed).code).toBe(4001);
      const refused = await eventually(
        () => readHost(server.deps, host.id),
        (row) => row?.refusedProtocolVersion === 0,
        { what: "refusal recorded" },
      );
      expect(refused?.refusedAt).toEqual(server.deps.clock.now());
      const agent = await connectAgent(server.wsUrl, token);
      agent.hello();
      await agent.frame(1);
      await server.channel.idle();
      expect(await readHost(server.deps, host.id)).toMatchObject({
        refusedProtocolVersion: null,
        refusedAt: null,
      });
      await agent.close();
    });
  });

  describe("update.result", () => {
    it("moves sent -> restarting, and records refused and rolled_back with their error", async () => {
      const { host, token } = await seedHost(server.deps, { agentVersion: "2.0.0" });
      await requestUpdate(host.id, "sent");
      const agent = await connectAgent(server.wsUrl, token);
      agent.hello({ agent_version: "2.0.0" });
      await agent.waitFor((frame) => frame.type === "command.update");
      const stateOf = (wanted: string) =>
        eventually(
          () => readHost(server.deps, host.id),
          (row) => row?.updateState === wanted,
          { what: `update state ${wanted}` },
        );

      agent.send("update.result", { version: "3.0.0", status: "restarting" });
      expect(await stateOf("restarting")).toMatchObject({ updateError: null });

      agent.send("update.result", {
        version: "3.0.0",
        status: "rolled_back",
        error: "3.0.0 did not connect in 120 s",
      });
      expect(await stateOf("rolled_back")).toMatchObject({ updateError: "3.0.0 did not connect in 120 s" });

      await requestUpdate(host.id, "sent");
      // News about another version than the one requested changes nothing.
      agent.send("update.result", { version: "9.9.9", status: "refused", error: "stale" });
      agent.send("update.result", {
        version: "3.0.0",
        status: "refused",
        error: "signature does not verify",
      });
      expect(await stateOf("refused")).toMatchObject({ updateError: "signature does not verify" });
      expect(
        server.deps.logLines.some((line) => line.includes("no current request") && line.includes("9.9.9")),
      ).toBe(true);
      await agent.close();
    });
  });

  describe("alerts", () => {
    it("opens agent_update_failed on a refusal, touches it on a rollback, resolves it on success", async () => {
      const { host, token } = await seedHost(server.deps, { agentVersion: "2.0.0" });
      await requestUpdate(host.id, "sent");
      const openAlerts = () =>
        server.deps.db
          .select()
          .from(alerts)
          .where(and(eq(alerts.hostId, host.id), isNull(alerts.resolvedAt)));
      const agent = await connectAgent(server.wsUrl, token);
      agent.hello({ agent_version: "2.0.0" });
      await agent.waitFor((frame) => frame.type === "command.update");
      agent.send("update.result", { version: "3.0.0", status: "restarting" });
      await server.channel.idle();
      expect(await openAlerts()).toEqual([]);

      agent.send("update.result", {
        version: "3.0.0",
        status: "refused",
        error: "signature does not verify",
      });
      const [opened] = await eventually(openAlerts, (rows) => rows.length === 1, { what: "alert opened" });
      expect(opened).toMatchObject({
        kind: "agent_update_failed",
        dedupKey: "",
        message: "agent update to 3.0.0 was refused: signature does not verify",
      });
      await requestUpdate(host.id, "sent");
      agent.send("update.result", { version: "3.0.0", status: "rolled_back", error: "crashed on start" });
      await eventually(openAlerts, (rows) => rows[0]?.message.includes("rolled back") === true, {
        what: "alert touched",
      });
      expect(await openAlerts()).toHaveLength(1);
      await agent.close();

      const updated = await connectAgent(server.wsUrl, token);
      await requestUpdate(host.id, "restarting");
      updated.hello({ agent_version: "3.0.0" });
      await eventually(openAlerts, (rows) => rows.length === 0, { what: "alert resolved" });
      expect(await readHost(server.deps, host.id)).toMatchObject({ updateState: "succeeded" });
      await updated.close();
    });
  });

  describe("release key", () => {
    it("answers GET /api/agents/release-key with the agent bearer only", async () => {
      const { token } = await seedHost(server.deps);
      const ok = await fetch(`${server.url}/api/agents/release-key`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({
        release_public_key: encodePublicKey(server.deps.releaseKey.publicKey),
      });
      const none = await fetch(`${server.url}/api/agents/release-key`);
      expect(none.status).toBe(401);
      expect(await none.json()).toMatchObject({ code: "unauthorised" });
      const wrong = await fetch(`${server.url}/api/agents/release-key`, {
        headers: { authorization: "Bearer fba_not-a-real-token" },
      });
      expect(wrong.status).toBe(401);
    });
  });
});

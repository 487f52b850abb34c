/**
 * The hello's initial push and a slot with a repository server login apart from its password
 * (protocol 11): an older agent would ignore `login_password` and log in with the repository
 * password, so the slot is left out, the reason logged, and no init is started on it.
 */
import { jobs } from "@fleetback/db";
import { SNAPSHOT_OWNER_PROTOCOL_VERSION } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { bindCredentials, seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { connectAgent } from "../testing/test-agent.js";

const repo = {
  url: "rest:https://backup.example:8000/web-1",
  username: "web-1",
  password: "repo-secret-31a",
  login_password: "login-secret-31b",
};
const admin = {
  url: "rest:https://backup.example:8000/web-1",
  username: "admin",
  password: "admin-secret-31c",
};

runServerSuite("agent channel: a separate repository login on hello", (server) => {
  describe("initial push", () => {
    it("leaves the slot out for an agent older than protocol 11, logs why, and starts no init", async () => {
      const { host, token } = await seedHost(server.deps);
      await bindCredentials(server.deps, host.id, { repo, admin });
      const agent = await connectAgent(server.wsUrl, token);
      agent.hello({ protocol_version: SNAPSHOT_OWNER_PROTOCOL_VERSION - 1 });
      await agent.frame(2);
      await server.channel.idle();
      expect(agent.frames.map((frame) => [frame.type, frame.payload])).toEqual([
        ["config.update", { slot: "admin", repository: admin }],
        ["config.update", { caps: { bandwidth_up_kbps: null, bandwidth_down_kbps: null } }],
        ["schedule.set", { version: 0, schedules: [] }],
      ]);
      const lines = server.deps.logLines.filter((line) => line.includes(host.id));
      const withheld = lines.find((line) => line.includes("credential slot not sent to the agent"));
      expect(JSON.parse(withheld ?? "{}")).toMatchObject({
        slot: "repo",
        reason: expect.stringContaining(`needs an agent of protocol ${SNAPSHOT_OWNER_PROTOCOL_VERSION}`),
      });
      expect(await server.deps.db.select().from(jobs).where(eq(jobs.hostId, host.id))).toEqual([]);
      const text = server.deps.logLines.join("\n");
      expect(text).not.toContain(repo.password);
      expect(text).not.toContain(repo.login_password);
      await agent.close();
    });

    it("pushes the slot with its login to an agent of protocol 11, and inits on it", async () => {
      const { host, token } = await seedHost(server.deps);
      await bindCredentials(server.deps, host.id, { repo });
      const agent = await connectAgent(server.wsUrl, token);
      agent.hello({ protocol_version: SNAPSHOT_OWNER_PROTOCOL_VERSION });
      expect((await agent.frame(0)).payload).toEqual({ slot: "repo", repository: repo });
      // The auto-init the older agent above did not get, for want of the slot.
      expect((await agent.waitFor((frame) => frame.type === "command.run")).payload).toMatchObject({
        kind: "init",
      });
      await agent.close();
    });
  });
});

import { expect, it } from "vitest";
import { eventually } from "../testing/eventually.js";
import { readHost, seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { connectAgent } from "../testing/test-agent.js";
import { sweepOfflineHosts } from "./offline-sweeper.js";

runServerSuite("offline sweeper", (server) => {
  it("marks a host silent for more than 90 s offline and closes its socket; a recent one stays", async () => {
    const deps = server.deps;
    const silent = await seedHost(deps);
    const chatty = await seedHost(deps, { name: "db-1" });
    const quiet = await connectAgent(server.wsUrl, silent.token);
    quiet.hello();
    await quiet.frame(1);
    deps.clock.advance(60_000);
    const talking = await connectAgent(server.wsUrl, chatty.token);
    talking.hello();
    await talking.frame(1);

    deps.clock.advance(30_000);
    expect(await sweepOfflineHosts(deps, deps.clock.now())).toEqual([]);
    deps.clock.advance(1);
    expect(await sweepOfflineHosts(deps, deps.clock.now())).toEqual([silent.host.id]);

    expect((await readHost(deps, silent.host.id))?.status).toBe("offline");
    expect((await quiet.closed).code).toBe(1001);
    expect((await readHost(deps, chatty.host.id))?.status).toBe("online");
    expect(deps.hub.isOnline(chatty.host.id)).toBe(true);
    await talking.close();
    await eventually(
      async () => (await readHost(deps, chatty.host.id))?.status,
      (status) => status === "offline",
    );
  });
});

import { pendingRuns } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { createGroup } from "../sources/source-groups.js";
import { eventually } from "../testing/eventually.js";
import { createTestGroup, seedAuditContext, seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { startBackup } from "../testing/start-backup-test-support.js";
import { connectAgent } from "../testing/test-agent.js";

runServerSuite("agent channel: runs queued while the host was offline", (server) => {
  it("sends a run queued while offline right after the hello, without waiting for its retry slot", async () => {
    const { deps } = server;
    const { host, token } = await seedHost(deps, { name: "laptop" });
    const group = await createTestGroup(deps, host.id, {
      name: "home",
      includes: ["/home"],
      retry_max: 3,
      retry_backoff_seconds: 300,
    });
    const queued = await startBackup(deps, { hostId: host.id, actorKind: "user" }, group);
    expect(queued.outcome).toBe("queued");
    const before = deps.clock.now().getTime();

    const agent = await connectAgent(server.wsUrl, token);
    agent.hello({ hostname: "laptop" });
    const run = await agent.waitFor((frame) => frame.type === "command.run");
    expect(run.payload).toMatchObject({ kind: "backup", tag: "home", includes: ["/home"] });
    // The hello sent it, not a tick at the retry slot: the clock has not moved.
    expect(deps.clock.now().getTime()).toBe(before);
    // Nothing is left waiting (the row goes once the command is out), so the host's page no longer
    // lists it as queued for "host offline".
    await eventually(
      () => deps.db.select().from(pendingRuns).where(eq(pendingRuns.hostId, host.id)),
      (rows) => rows.length === 0,
      { what: "the dispatched run's pending row removed" },
    );
    await agent.close();
  });

  it("keeps the backoff of a retry after a transient failure: a reconnect does not end a lock", async () => {
    const { deps } = server;
    const { host, token } = await seedHost(deps, { name: "nas" });
    const audit = await seedAuditContext(deps);
    const retry = { retry_max: 3, retry_backoff_seconds: 300 };
    const offline = await createGroup(deps, audit, host.id, { name: "srv", includes: ["/srv"], ...retry });
    const locked = await createGroup(deps, audit, host.id, { name: "var", includes: ["/var"], ...retry });
    await startBackup(deps, { hostId: host.id, actorKind: "user" }, offline);
    await startBackup(deps, { hostId: host.id, actorKind: "user" }, locked);
    await deps.db
      .update(pendingRuns)
      .set({ reason: "repository is already locked" })
      .where(eq(pendingRuns.sourceGroupId, locked.id));

    const agent = await connectAgent(server.wsUrl, token);
    agent.hello({ hostname: "nas" });
    // The offline run going proves the hello's dispatch has run; the locked one waited.
    const run = await agent.waitFor((frame) => frame.type === "command.run");
    expect(run.payload).toMatchObject({ tag: "srv" });
    const left = await eventually(
      () => deps.db.select().from(pendingRuns).where(eq(pendingRuns.hostId, host.id)),
      (rows) => rows.length === 1,
      { what: "the dispatched run's pending row removed" },
    );
    expect(left.map((row) => [row.sourceGroupId, row.nextAttemptAt.getTime()])).toEqual([
      [locked.id, deps.clock.now().getTime() + 300_000],
    ]);
    expect(agent.frames.filter((frame) => frame.type === "command.run")).toHaveLength(1);
    await agent.close();
  });
});

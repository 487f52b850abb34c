/**
 * The scheduler behind a real agent on a real socket: schedule.set is acked and a tick becomes a
 * schedule.fire frame the protocol accepts (unit tests with fake timers are in scheduler/).
 */
import { describe, expect, it } from "vitest";
import { nextUlid, useHarness } from "../testing/agent-harness.js";
import { useTestServer } from "../testing/test-server.js";

const server = useTestServer();
const startAgent = useHarness(server);

describe("agent schedules", () => {
  it("acks schedule.set and sends schedule.fire at the tick with the tick's UTC time", async () => {
    const harness = await startAgent({ resticCommand: "/nonexistent/restic" });
    const id = nextUlid();
    harness.peer.send("schedule.set", {
      version: 5,
      schedules: [
        { id, cron: "* * * * * *", enabled: true, source_groups: [nextUlid()] },
        { id: nextUlid(), cron: "* * * * * *", enabled: false, source_groups: [] },
      ],
    });
    expect((await harness.peer.next("schedule.ack")).payload).toEqual({ version: 5 });
    const fire = (await harness.peer.next("schedule.fire", 3_000)).payload;
    expect(fire.schedule_id).toBe(id);
    expect(fire.scheduled_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);

    harness.peer.send("schedule.set", { version: 6, schedules: [] });
    expect((await harness.peer.next("schedule.ack")).payload).toEqual({ version: 6 });
    expect(harness.agent.scheduler.armed()).toEqual([]);
  });

  it("sends the last firing again on the next connection: the server that took it may have died unread", async () => {
    const harness = await startAgent({ resticCommand: "/nonexistent/restic" });
    const id = nextUlid();
    harness.peer.send("schedule.set", {
      version: 1,
      schedules: [{ id, cron: "*/2 * * * * *", enabled: true, source_groups: [nextUlid()] }],
    });
    await harness.peer.next("schedule.ack");
    const first = (await harness.peer.next("schedule.fire", 4_000)).payload;
    // The server goes away right after the firing (a replica killed): the agent reconnects at once.
    harness.peer.close(1012, "restarting");
    const peer = await server().nextPeer(5_000);
    await peer.next("hello");
    const again = (await peer.next("schedule.fire", 1_500)).payload;
    expect(again).toEqual(first);
  });
});

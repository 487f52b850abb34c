import type { AgentEnvelope } from "@fleetback/protocol";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import { createPendingRequests } from "./pending-requests.js";
import { HubOfflineError, HubTimeoutError } from "./types.js";

function reply(id: string, type: string): AgentEnvelope {
  return { v: 1, id, type, ts: "2026-01-01T00:00:00.000Z", payload: {} } as unknown as AgentEnvelope;
}

describe("pending requests", () => {
  it("ends a request only with a reply from the host asked, of the type awaited", async () => {
    const pending = createPendingRequests();
    const waiting = pending.wait("r1", "host-a", "snapshots.report", 60_000);
    expect(pending.settle("host-b", reply("r1", "snapshots.report"))).toBe(false);
    expect(pending.settle("host-a", reply("r1", "job.log"))).toBe(false);
    expect(pending.settle("host-a", reply("r1", "snapshots.report"))).toBe(true);
    await expect(waiting).resolves.toMatchObject({ id: "r1" });
    // Ended once: the same reply again finds nobody waiting.
    expect(pending.settle("host-a", reply("r1", "snapshots.report"))).toBe(false);
  });

  it("fails every request to a host when it goes, and leaves the others waiting", async () => {
    const pending = createPendingRequests();
    const a1 = pending.wait("a1", "host-a", "snapshots.report", 60_000);
    const a2 = pending.wait("a2", "host-a", "snapshots.report", 60_000);
    const b1 = pending.wait("b1", "host-b", "snapshots.report", 60_000);
    pending.failHost("host-a", new HubOfflineError("host-a disconnected"));
    await expect(a1).rejects.toThrow(HubOfflineError);
    await expect(a2).rejects.toThrow("host-a disconnected");
    expect(pending.settle("host-b", reply("b1", "snapshots.report"))).toBe(true);
    await expect(b1).resolves.toMatchObject({ id: "b1" });
  });

  it("times a request out with the host and the reply it waited for, and forgets it", async () => {
    const pending = createPendingRequests();
    await expect(pending.wait("t1", "host-a", "snapshots.report", 1)).rejects.toThrow(
      new HubTimeoutError("no snapshots.report from host host-a within 1 ms"),
    );
    expect(pending.settle("host-a", reply("t1", "snapshots.report"))).toBe(false);
  });

  it("ends a relayed reply by id, and fails one or all on demand", async () => {
    const pending = createPendingRequests();
    const relayed = pending.wait("x1", "host-a", "snapshots.report", 60_000);
    const failed = pending.wait("x2", "host-a", "snapshots.report", 60_000);
    const rest = pending.wait("x3", "host-b", "snapshots.report", 60_000);
    pending.resolveRelayed("x1", reply("x1", "snapshots.report"));
    pending.fail("x2", new HubOfflineError("not connected there"));
    pending.failAll(new HubOfflineError("server is shutting down"));
    await expect(relayed).resolves.toMatchObject({ id: "x1" });
    await expect(failed).rejects.toThrow("not connected there");
    await expect(rest).rejects.toThrow("server is shutting down");
  });

  it("times out on the timers it was given, to the millisecond, and a settled request leaves no timer", async () => {
    const manual = createManualTimers();
    const pending = createPendingRequests(manual);
    const settled = pending.wait("s1", "host-a", "snapshots.report", 30_000);
    pending.settle("host-a", reply("s1", "snapshots.report"));
    await settled;
    expect(manual.pending()).toBe(0);
    let outcome = "waiting";
    const timedOut = pending.wait("t2", "host-a", "snapshots.report", 30_000).catch((error: Error) => {
      outcome = error.message;
    });
    manual.advance(29_999);
    await Promise.resolve();
    expect(outcome).toBe("waiting");
    manual.advance(1);
    await timedOut;
    expect(outcome).toBe("no snapshots.report from host host-a within 30000 ms");
  });
});

import { decodeServerMessage, encode } from "@fleetback/protocol";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { createLocalHub, type LocalHub } from "./local-hub.js";
import { HubOfflineError, HubTimeoutError } from "./types.js";

/** A hub with host h1 connected through a recording connection. */
function hubWithHost() {
  const hub = createLocalHub();
  const a = createRecordingConnection("h1");
  hub.register(a);
  return { hub, a };
}

/** Asks h1 for its snapshot's root listing, waiting up to `timeoutMs` for the reply. */
function listRoot(hub: LocalHub, timeoutMs = 5_000) {
  return hub.request(
    "h1",
    "tree.list",
    { snapshot_id: "abcd1234", path: "/" },
    "tree.list.result",
    timeoutMs,
  );
}

afterEach(() => {
  vi.useRealTimers();
});

describe("local hub", () => {
  it("sends to the current connection and reports offline hosts", () => {
    const hub = createLocalHub();
    const a = createRecordingConnection("h1");
    expect(hub.send("h1", "command.cancel", { job_id: "01JD0000000000000000000000" })).toBe(false);
    hub.register(a);
    expect(hub.isOnline("h1")).toBe(true);
    expect(hub.send("h1", "command.cancel", { job_id: "01JD0000000000000000000000" })).toBe(true);
    const decoded = decodeServerMessage(a.sent[0] ?? "");
    expect(decoded.ok && decoded.message.type).toBe("command.cancel");
  });

  it("lets the newest connection win and ignores the old one's unregister", () => {
    const hub = createLocalHub();
    const first = createRecordingConnection("h1");
    const second = createRecordingConnection("h1");
    expect(hub.register(first)).toBeUndefined();
    expect(hub.register(second)).toBe(first);
    expect(hub.unregister(first)).toBe(false);
    expect(hub.isOnline("h1")).toBe(true);
    expect(hub.isCurrent(second)).toBe(true);
    expect(hub.unregister(second)).toBe(true);
    expect(hub.isOnline("h1")).toBe(false);
  });

  it("correlates a reply by id and drops replies nobody waits for", async () => {
    const { hub, a } = hubWithHost();
    const waiting = listRoot(hub);
    const sent = JSON.parse(a.sent[0] ?? "{}") as { id: string };
    const reply = JSON.parse(encode("tree.list.result", { entries: [] }, sent.id));
    expect(hub.deliverReply("h2", reply)).toBe(false);
    expect(hub.deliverReply("h1", reply)).toBe(true);
    await expect(waiting).resolves.toMatchObject({ id: sent.id, type: "tree.list.result" });
    expect(hub.deliverReply("h1", reply)).toBe(false);
  });

  it("ends a waiting request at its timeout", async () => {
    vi.useFakeTimers();
    const hub = createLocalHub();
    hub.register(createRecordingConnection("h1"));
    const waiting = listRoot(hub, 60_000);
    vi.advanceTimersByTime(60_000);
    await expect(waiting).rejects.toBeInstanceOf(HubTimeoutError);
  });

  it("fails waiting requests when the host disconnects, and closes with the given code", async () => {
    const { hub, a } = hubWithHost();
    const waiting = listRoot(hub);
    hub.disconnect("h1", 4003, "host deleted");
    await expect(waiting).rejects.toBeInstanceOf(HubOfflineError);
    expect(a.closedWith).toEqual([{ code: 4003, reason: "host deleted" }]);
    await expect(listRoot(hub)).rejects.toBeInstanceOf(HubOfflineError);
  });
});

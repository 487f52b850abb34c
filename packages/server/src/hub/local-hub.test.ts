import { decodeServerMessage, encode } from "@fleetback/protocol";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { createLocalHub } from "./local-hub.js";
import { HubOfflineError, HubTimeoutError } from "./types.js";

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
    const hub = createLocalHub();
    const a = createRecordingConnection("h1");
    hub.register(a);
    const waiting = hub.request(
      "h1",
      "tree.list",
      { snapshot_id: "abcd1234", path: "/" },
      "tree.list.result",
      5_000,
    );
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
    const waiting = hub.request(
      "h1",
      "tree.list",
      { snapshot_id: "abcd1234", path: "/" },
      "tree.list.result",
      60_000,
    );
    vi.advanceTimersByTime(60_000);
    await expect(waiting).rejects.toBeInstanceOf(HubTimeoutError);
  });

  it("fails waiting requests when the host disconnects, and closes with the given code", async () => {
    const hub = createLocalHub();
    const a = createRecordingConnection("h1");
    hub.register(a);
    const waiting = hub.request(
      "h1",
      "tree.list",
      { snapshot_id: "abcd1234", path: "/" },
      "tree.list.result",
      5_000,
    );
    hub.disconnect("h1", 4003, "host deleted");
    await expect(waiting).rejects.toBeInstanceOf(HubOfflineError);
    expect(a.closedWith).toEqual([{ code: 4003, reason: "host deleted" }]);
    await expect(
      hub.request("h1", "tree.list", { snapshot_id: "abcd1234", path: "/" }, "tree.list.result", 5_000),
    ).rejects.toBeInstanceOf(HubOfflineError);
  });
});

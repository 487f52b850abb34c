import { describe, expect, it } from "vitest";
import { createOutbox } from "./outbox.js";

describe("createOutbox", () => {
  it("drains in order and keeps what the socket refused", () => {
    const outbox = createOutbox();
    outbox.push("a", "job.started", "J1");
    outbox.push("b", "log.stream", "J1");
    outbox.push("c", "job.finished", "J1");
    const sent: string[] = [];
    outbox.drain((frame) => (frame === "c" ? false : sent.push(frame) > 0));
    expect(sent).toEqual(["a", "b"]);
    expect(outbox.size).toBe(1);
    expect(outbox.unreportedJobIds()).toEqual(["J1"]);
    outbox.drain((frame) => sent.push(frame) > 0);
    expect(sent).toEqual(["a", "b", "c"]);
    expect(outbox.unreportedJobIds()).toEqual([]);
  });

  it("drops old log lines first when full, never a finish report while a log line is left", () => {
    const outbox = createOutbox(3);
    outbox.push("started", "job.started", "J1");
    outbox.push("line1", "log.stream", "J1");
    outbox.push("line2", "log.stream", "J1");
    outbox.push("finished", "job.finished", "J1");
    const sent: string[] = [];
    outbox.drain((frame) => sent.push(frame) > 0);
    expect(sent).toEqual(["started", "line2", "finished"]);
  });
});

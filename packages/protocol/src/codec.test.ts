/**
 * @module codec.test
 * decode: typed envelopes, the tolerant reader, and every way a frame is refused.
 */
import { describe, expect, it } from "vitest";
import { decode, decodeAgentMessage, decodeServerMessage } from "./codec.js";
import { MAX_FRAME_BYTES, MAX_JSON_DEPTH } from "./constants.js";
import type { AgentEnvelope } from "./envelope.js";
import type { DecodeError } from "./protocol-error.js";
import { goldenFrame } from "./test-fixtures.js";

function errorOf(data: string | Uint8Array): DecodeError {
  const result = decode(data);
  if (result.ok) {
    throw new Error("expected a decode error");
  }
  return result.error;
}

const HELLO_ID = goldenFrame("hello.json").id;

describe("decode", () => {
  it("returns a typed envelope that narrows on type", () => {
    const result = decodeAgentMessage(JSON.stringify(goldenFrame("hello.json")));
    expect(result.ok).toBe(true);
    if (result.ok && result.message.type === "hello") {
      const hello: AgentEnvelope<"hello"> = result.message;
      expect(hello.payload.protocol_version).toBe(1);
      expect(hello.id).toBe(HELLO_ID);
    }
  });

  it("accepts UTF-8 bytes as well as text", () => {
    const bytes = new TextEncoder().encode(JSON.stringify(goldenFrame("log.stream.json")));
    expect(decodeAgentMessage(bytes).ok).toBe(true);
  });

  it("strips unknown payload and envelope properties (tolerant reader)", () => {
    const frame = { ...goldenFrame("job.progress.json"), trace: "x" };
    frame.payload.future_field = { nested: true };
    const result = decode(JSON.stringify(frame));
    expect(result.ok && result.message).toEqual(goldenFrame("job.progress.json"));
  });

  it("keeps the tool's summary verbatim", () => {
    const frame = goldenFrame("job.finished.json");
    frame.payload.summary = { files_new: 1, some_future_counter: 2 };
    const result = decode(JSON.stringify(frame));
    expect(result.ok && result.message.payload).toMatchObject({ summary: { some_future_counter: 2 } });
  });

  it.each([
    ["not json", "frame is not JSON"],
    ["[1,2]", "frame is not a JSON object"],
    ["null", "frame is not a JSON object"],
    ['"hello"', "frame is not a JSON object"],
    ["{}", "id: required"],
    [`{"id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","payload":{}}`, "type: required"],
    [`{"id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","type":"heartbeat"}`, "payload: required"],
    [`{"id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","type":"","payload":{}}`, "type: must not be empty"],
    [`{"id":"01arz3ndektsv4rrffq69g5fav","type":"heartbeat","payload":{}}`, "id: expected ULID"],
    [`{"id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","type":"heartbeat","payload":[]}`, "payload: expected object"],
    [`{"id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","type":"heartbeat","payload":null}`, "payload: expected object"],
  ])("refuses %s as invalid_message", (text, message) => {
    expect(errorOf(text)).toMatchObject({ code: "invalid_message", message });
  });

  it("names the failing payload field and echoes the request id", () => {
    const frame = goldenFrame("hello.json");
    frame.payload.protocol_version = "1";
    expect(errorOf(JSON.stringify(frame))).toEqual({
      code: "invalid_message",
      message: "payload/protocol_version: expected integer",
      path: "payload/protocol_version",
      request_id: HELLO_ID,
      type: "hello",
    });
  });

  it.each([
    ["hello.json", (p: Record<string, unknown>) => delete p.hostname, "payload/hostname: required"],
    [
      "hello.json",
      (p: Record<string, unknown>) => (p.running_job_ids = ["x"]),
      "payload/running_job_ids/0: expected ULID",
    ],
    [
      "snapshots.report.json",
      (p: Record<string, unknown>) => (p.refreshed_at = "2026-11-21T23:41:21+01:00"),
      "payload/refreshed_at: expected RFC 3339 UTC timestamp",
    ],
    [
      "config.update.caps.json",
      (p: Record<string, unknown>) => (p.caps = { bandwidth_up_kbps: 0, bandwidth_down_kbps: null }),
      "payload/caps/bandwidth_up_kbps: expected integer >= 1 or null",
    ],
    [
      "config.update.repo.json",
      (p: Record<string, unknown>) => delete p.repository,
      "payload/repository: required",
    ],
    [
      "config.update.caps.json",
      (p: Record<string, unknown>) => (p.slot = "repo"),
      "payload/repository: required",
    ],
    [
      "job.progress.json",
      (p: Record<string, unknown>) => (p.percent_done = 1.5),
      "payload/percent_done: expected number >= 0 and <= 1",
    ],
    [
      "job.finished.json",
      (p: Record<string, unknown>) => (p.exit_code = "0"),
      "payload/exit_code: expected integer or null",
    ],
    [
      "job.finished.json",
      (p: Record<string, unknown>) => (p.status = "lost"),
      'payload/status: expected one of "succeeded", "failed", "cancelled"',
    ],
    [
      "tree.list.result.json",
      (p: Record<string, unknown>) => (p.error = "boom"),
      "payload/error: must be absent",
    ],
    [
      "tree.list.after.json",
      (p: Record<string, unknown>) => (p.after = "../etc"),
      "payload/after: expected a child name without / or NUL",
    ],
    [
      "tree.list.after.json",
      (p: Record<string, unknown>) => (p.after = ".."),
      "payload/after: expected a child name without / or NUL",
    ],
    [
      "tree.list.result.error.json",
      (p: Record<string, unknown>) => (p.next_after = "b"),
      "payload/next_after: must be absent",
    ],
    [
      "command.update.json",
      (p: Record<string, unknown>) => (p.sha256 = "ABC"),
      "payload/sha256: expected lowercase hex SHA-256",
    ],
  ])("%s: %s", (file, mutate, message) => {
    const frame = goldenFrame(file);
    mutate(frame.payload);
    expect(errorOf(JSON.stringify(frame)).message).toBe(message);
  });

  it("reports unknown and wrong-direction types as unknown_type", () => {
    const frame = { ...goldenFrame("hello.json"), type: "hello.v2" };
    expect(errorOf(JSON.stringify(frame))).toMatchObject({
      code: "unknown_type",
      path: "type",
      request_id: HELLO_ID,
    });
    const hello = JSON.stringify(goldenFrame("hello.json"));
    expect(decodeServerMessage(hello)).toMatchObject({
      ok: false,
      error: { code: "unknown_type", type: "hello" },
    });
    const cancel = JSON.stringify(goldenFrame("command.cancel.json"));
    expect(decodeAgentMessage(cancel)).toMatchObject({ ok: false, error: { code: "unknown_type" } });
  });

  it.each(["constructor", "__proto__", "toString", "hasOwnProperty"])("treats type %s as unknown", (type) => {
    const frame = { ...goldenFrame("heartbeat.json"), type };
    expect(errorOf(JSON.stringify(frame)).code).toBe("unknown_type");
  });

  it("does not echo a huge type back", () => {
    const frame = { ...goldenFrame("heartbeat.json"), type: "t".repeat(10_000) };
    const error = errorOf(JSON.stringify(frame));
    expect(error.code).toBe("unknown_type");
    expect(error.message.length).toBeLessThan(200);
  });

  it("refuses frames over MAX_FRAME_BYTES in bytes, not characters, without parsing", () => {
    const frame = goldenFrame("log.stream.json");
    frame.payload.line = "é".repeat(MAX_FRAME_BYTES / 2);
    const text = JSON.stringify(frame);
    expect(text.length).toBeLessThan(MAX_FRAME_BYTES);
    expect(errorOf(text).message).toBe(`frame exceeds ${MAX_FRAME_BYTES} bytes`);
    expect(errorOf(new Uint8Array(MAX_FRAME_BYTES + 1)).message).toBe(
      `frame exceeds ${MAX_FRAME_BYTES} bytes`,
    );
    expect(errorOf(`"${"x".repeat(MAX_FRAME_BYTES)}"`).message).toBe(
      `frame exceeds ${MAX_FRAME_BYTES} bytes`,
    );
  });

  it("accepts a frame of exactly MAX_FRAME_BYTES", () => {
    const frame = goldenFrame("log.stream.json");
    frame.payload.line = "";
    const padding = MAX_FRAME_BYTES - JSON.stringify(frame).length;
    frame.payload.line = "a".repeat(padding);
    expect(decode(JSON.stringify(frame)).ok).toBe(true);
  });

  it("refuses invalid UTF-8", () => {
    expect(errorOf(new Uint8Array([0x7b, 0xff, 0x7d])).message).toBe("frame is not valid UTF-8");
  });

  it("refuses JSON nested deeper than MAX_JSON_DEPTH", () => {
    const frame = goldenFrame("job.finished.json");
    let deep: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH; i++) {
      deep = { d: deep };
    }
    frame.payload.summary = { deep };
    expect(errorOf(JSON.stringify(frame)).message).toBe(`frame nests deeper than ${MAX_JSON_DEPTH} levels`);
    const brackets = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    expect(errorOf(brackets).code).toBe("invalid_message");
    const arrays = { ...goldenFrame("heartbeat.json"), payload: { running_job_ids: [] as unknown[] } };
    let nested: unknown[] = arrays.payload.running_job_ids;
    for (let i = 0; i < MAX_JSON_DEPTH; i++) {
      const inner: unknown[] = [];
      nested.push(inner);
      nested = inner;
    }
    expect(errorOf(JSON.stringify(arrays)).message).toBe(`frame nests deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it.each([
    '{"__proto__":{"polluted":true},"id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","type":"heartbeat","payload":{"running_job_ids":[]}}',
    '{"id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","type":"heartbeat","payload":{"running_job_ids":[],"\\u005f_proto__":{"x":1}}}',
    '{"id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","type":"heartbeat","payload":{"running_job_ids":[[{"__proto__":{"x":1}}]]}}',
  ])("refuses __proto__ keys, escaped or not", (text) => {
    expect(errorOf(text).message).toBe("frame contains a __proto__ key");
    expect(Object.hasOwn(Object.prototype, "polluted")).toBe(false);
  });
});

/**
 * @module codec-encode.test
 * encode and validatePayload: canonical output, stripping, and errors thrown or returned.
 */
import { describe, expect, it } from "vitest";
import { encode, validatePayload } from "./codec.js";
import { MAX_FRAME_BYTES } from "./constants.js";
import { isUlid } from "./formats.js";
import { ProtocolError } from "./protocol-error.js";
import { goldenFrame } from "./test-fixtures.js";

const HELLO_ID = goldenFrame("hello.json").id;

describe("encode", () => {
  const progress = { job_id: HELLO_ID, percent_done: 0.5, files_done: 1, bytes_done: 2 };

  it("writes id, type, payload in that order and payload keys sorted", () => {
    const text = encode(
      "schedule.fire",
      { scheduled_at: "2026-11-22T02:00:00Z", schedule_id: HELLO_ID },
      HELLO_ID,
    );
    expect(text).toBe(
      `{"id":"${HELLO_ID}","type":"schedule.fire","payload":{"schedule_id":"${HELLO_ID}","scheduled_at":"2026-11-22T02:00:00Z"}}`,
    );
  });

  it("generates a ULID when no id is given", () => {
    const frame = JSON.parse(encode("heartbeat", { running_job_ids: [] }));
    expect(isUlid(frame.id)).toBe(true);
  });

  it("drops unknown properties and leaves the caller's object alone", () => {
    const row = { ...progress, host_secret: "do not send" };
    const text = encode("job.progress", row, HELLO_ID);
    expect(text).not.toContain("host_secret");
    expect(row.host_secret).toBe("do not send");
  });

  it("drops optional properties set to undefined", () => {
    const text = encode("job.progress", {
      job_id: HELLO_ID,
      percent_done: 0,
      files_done: 0,
      bytes_done: 0,
      files_total: undefined,
    });
    expect(text).not.toContain("files_total");
  });

  it("throws a ProtocolError naming the field for an invalid payload", () => {
    const bad = () => encode("job.progress", { ...progress, percent_done: Number.NaN });
    expect(bad).toThrow(ProtocolError);
    expect(bad).toThrow("payload/percent_done: expected number >= 0 and <= 1");
    try {
      bad();
    } catch (error) {
      expect(error).toMatchObject({
        code: "invalid_message",
        path: "payload/percent_done",
        context: { type: "job.progress" },
      });
    }
  });

  it("throws for an unknown type, a bad id and an oversized frame", () => {
    // @ts-expect-error: the type system already refuses an unknown type
    expect(() => encode("nope", {})).toThrow(ProtocolError);
    expect(() => encode("heartbeat", { running_job_ids: [] }, "not-an-id")).toThrow("id: expected ULID");
    const line = "x".repeat(MAX_FRAME_BYTES);
    expect(() =>
      encode("log.stream", { job_id: HELLO_ID, stream: "stdout", line, ts: "2026-11-21T23:41:15Z" }),
    ).toThrow(`frame exceeds ${MAX_FRAME_BYTES} bytes`);
  });

  it("throws when the tool summary cannot be serialised", () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) {
      deep = { d: deep };
    }
    const payload = { job_id: HELLO_ID, status: "succeeded", exit_code: 0, summary: deep } as const;
    expect(() => encode("job.finished", payload)).toThrow(ProtocolError);
  });
});

describe("validatePayload", () => {
  it("returns a stripped copy and leaves the input alone", () => {
    const value = { running_job_ids: [], extra: 1 };
    expect(validatePayload("heartbeat", value)).toEqual({ ok: true, payload: { running_job_ids: [] } });
    expect(value.extra).toBe(1);
  });

  it("names the failing field", () => {
    expect(validatePayload("command.cancel", { job_id: 5 })).toEqual({
      ok: false,
      error: {
        code: "invalid_message",
        message: "payload/job_id: expected ULID",
        path: "payload/job_id",
        type: "command.cancel",
      },
    });
  });

  it("refuses unknown types and non-JSON values without throwing", () => {
    // @ts-expect-error: the type system already refuses an unknown type
    expect(validatePayload("nope", {})).toMatchObject({ ok: false, error: { code: "unknown_type" } });
    const withFunction = { job_id: HELLO_ID, status: "failed", exit_code: 1, summary: { f: () => 1 } };
    expect(validatePayload("job.finished", withFunction)).toMatchObject({
      ok: false,
      error: { code: "invalid_message" },
    });
  });
});

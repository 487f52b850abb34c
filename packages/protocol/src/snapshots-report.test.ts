/**
 * @module snapshots-report.test
 * `snapshots.report` whole and in parts (protocol 2): the part fields travel all together or not
 * at all, within their bounds, and both forms survive a decode/encode round trip either way.
 */

import { Compile } from "typebox/compile";
import { describe, expect, it } from "vitest";
import {
  isSnapshotsReportPart,
  type SnapshotsReport,
  type SnapshotsReportPart,
  SnapshotsReportWhole,
} from "./agent-messages.js";
import { decodeAgentMessage, encode, validatePayload } from "./codec.js";
import { SNAPSHOTS_REPORT_MAX_PARTS } from "./constants.js";
import { goldenFrame } from "./test-fixtures.js";

const whole = goldenFrame("snapshots.report.json");
const part = goldenFrame("snapshots.report.part.json");

function decodedPayload(frame: unknown): SnapshotsReport {
  const result = decodeAgentMessage(JSON.stringify(frame));
  if (!result.ok) {
    throw new Error(result.error.message);
  }
  if (result.message.type !== "snapshots.report") {
    throw new Error(`decoded as ${result.message.type}`);
  }
  return result.message.payload;
}

function decodeMessage(payload: Record<string, unknown>): string {
  const result = decodeAgentMessage(JSON.stringify({ ...part, payload }));
  return result.ok ? "ok" : result.error.message;
}

describe("snapshots.report in parts", () => {
  it("decodes the golden part and encodes it back, report fields and all", () => {
    const payload = decodedPayload(part);
    expect(isSnapshotsReportPart(payload)).toBe(true);
    if (!isSnapshotsReportPart(payload)) {
      return;
    }
    expect(payload).toMatchObject({ report_id: "01M807RS6G7E17QDDMMZWYAX14", part: 1, parts: 3 });
    expect(JSON.parse(encode("snapshots.report", payload, part.id))).toEqual(part);
  });

  it("encodes a part built in code and decodes it to the same payload", () => {
    const built: SnapshotsReportPart = {
      snapshots: [],
      refreshed_at: "2026-11-21T23:41:21Z",
      report_id: part.id,
      part: 0,
      parts: 1,
    };
    expect(decodedPayload(JSON.parse(encode("snapshots.report", built)))).toEqual(built);
  });

  it("keeps a report without the part fields a whole report, as protocol 1 sent it", () => {
    const payload = decodedPayload(whole);
    expect(isSnapshotsReportPart(payload)).toBe(false);
    expect(JSON.parse(encode("snapshots.report", payload, whole.id))).toEqual(whole);
  });

  it.each([
    ["report_id alone", { report_id: part.id }, "payload/report_id: must be absent"],
    ["part and parts without report_id", { part: 0, parts: 2 }, "payload/report_id: required"],
    ["a lower-case report_id", { report_id: part.id.toLowerCase(), part: 0, parts: 2 }, "expected ULID"],
    ["a negative part", { report_id: part.id, part: -1, parts: 2 }, "payload/part: expected integer >= 0"],
    ["no parts at all", { report_id: part.id, part: 0, parts: 0 }, "payload/parts: expected integer >= 1"],
    [
      "more parts than the contract allows",
      { report_id: part.id, part: 0, parts: SNAPSHOTS_REPORT_MAX_PARTS + 1 },
      `payload/parts: expected integer >= 1 and <= ${SNAPSHOTS_REPORT_MAX_PARTS}`,
    ],
    ["a fractional part", { report_id: part.id, part: 0.5, parts: 2 }, "payload/part: expected integer"],
  ])("refuses %s", (_name, fields, message) => {
    const { report_id: _id, part: _part, parts: _parts, ...base } = part.payload;
    expect(decodeMessage({ ...base, ...fields })).toContain(message);
  });

  it("refuses a part as a whole report without reading its snapshots", () => {
    // The whole shape is tried first: a part must fail it on its part fields, before the list.
    let reads = 0;
    const payload = { ...part.payload };
    Object.defineProperty(payload, "snapshots", {
      enumerable: true,
      get() {
        reads++;
        return part.payload.snapshots;
      },
    });
    expect(Compile(SnapshotsReportWhole).Check(payload)).toBe(false);
    expect(reads).toBe(0);
    expect(decodedPayload(part)).toMatchObject({ part: 1, parts: 3 });
  });

  it("validates parts built in code the same way", () => {
    const payload = { ...part.payload, parts: SNAPSHOTS_REPORT_MAX_PARTS };
    expect(validatePayload("snapshots.report", payload).ok).toBe(true);
    expect(validatePayload("snapshots.report", { ...payload, part: SNAPSHOTS_REPORT_MAX_PARTS }).ok).toBe(
      false,
    );
  });
});

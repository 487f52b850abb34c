/** The drill kind (protocol 6): its bounds, and the summary shape the server reads. */
import { readFileSync } from "node:fs";
import { Value } from "typebox/value";
import { describe, expect, it } from "vitest";
import { decodeServerMessage } from "./codec.js";
import { DRILL_MAX_SAMPLE_FILES } from "./constants.js";
import { DrillSummary } from "./drill-summary.js";

function fixture(path: string): { payload: Record<string, unknown> } {
  return JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), "utf8"));
}

const command = fixture("server-to-agent/command.run.drill.json");

function withSample(sample: unknown): string {
  const drill = { ...(command.payload.drill as object), sample_files: sample };
  return JSON.stringify({ ...command, payload: { ...command.payload, drill } });
}

describe("command.run drill", () => {
  it("accepts 1 and DRILL_MAX_SAMPLE_FILES files", () => {
    expect(decodeServerMessage(withSample(1)).ok).toBe(true);
    expect(decodeServerMessage(withSample(DRILL_MAX_SAMPLE_FILES)).ok).toBe(true);
  });

  it.each([0, DRILL_MAX_SAMPLE_FILES + 1, 2.5, "20"])(
    "refuses sample_files %j, naming the field",
    (sample) => {
      const result = decodeServerMessage(withSample(sample));
      expect(result.ok).toBe(false);
      expect(result.ok ? "" : result.error.message).toContain("sample_files");
    },
  );

  it("refuses a drill without its snapshot", () => {
    const frame = { ...command, payload: { ...command.payload, drill: { sample_files: 3 } } };
    expect(decodeServerMessage(JSON.stringify(frame)).ok).toBe(false);
  });
});

describe("DrillSummary", () => {
  const summary = fixture("agent-to-server/job.finished.drill.json").payload.summary;

  it("describes the golden drill summary", () => {
    expect(Value.Check(DrillSummary, summary)).toBe(true);
  });

  it("refuses a summary whose counts are not counts", () => {
    expect(Value.Check(DrillSummary, { ...(summary as object), files_checked: -1 })).toBe(false);
    expect(Value.Check(DrillSummary, { ...(summary as object), mismatches: undefined })).toBe(false);
  });
});

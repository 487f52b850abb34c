import { readFileSync } from "node:fs";
import { Value } from "typebox/value";
import { describe, expect, it } from "vitest";
import { decodeServerMessage } from "./codec.js";
import { COPY_SNAPSHOTS_MAX } from "./constants.js";
import { CopySummary } from "./copy-summary.js";

function fixture(path: string): { payload: Record<string, unknown> } {
  return JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), "utf8"));
}

const command = fixture("server-to-agent/command.run.copy.json");
const id = (n: number) => n.toString(16).padStart(64, "0");

function withIds(ids: unknown): string {
  return JSON.stringify({ ...command, payload: { ...command.payload, copy: { snapshot_ids: ids } } });
}

describe("command.run copy", () => {
  it("takes 1 to COPY_SNAPSHOTS_MAX full snapshot ids", () => {
    expect(decodeServerMessage(withIds([id(1)])).ok).toBe(true);
    expect(decodeServerMessage(withIds(Array.from({ length: COPY_SNAPSHOTS_MAX }, (_, n) => id(n)))).ok).toBe(
      true,
    );
  });

  it("refuses no ids, too many, short ids and a copy with another kind's sub-payload", () => {
    expect(decodeServerMessage(withIds([])).ok).toBe(false);
    expect(
      decodeServerMessage(withIds(Array.from({ length: COPY_SNAPSHOTS_MAX + 1 }, (_, n) => id(n)))).ok,
    ).toBe(false);
    expect(decodeServerMessage(withIds(["c503a2e1"])).ok).toBe(false);
    const mixed = {
      ...command,
      payload: { ...command.payload, drill: { snapshot_id: id(1), sample_files: 1 } },
    };
    expect(decodeServerMessage(JSON.stringify(mixed)).ok).toBe(false);
  });

  it("takes the mirror credential slot", () => {
    const mirror = readFileSync(
      new URL("../fixtures/server-to-agent/config.update.mirror.json", import.meta.url),
      "utf8",
    );
    expect(decodeServerMessage(mirror)).toMatchObject({ ok: true });
  });
});

describe("CopySummary", () => {
  const summary = fixture("agent-to-server/job.finished.copy.json").payload.summary;

  it("describes the golden copy summary", () => {
    expect(Value.Check(CopySummary, summary)).toBe(true);
    expect(Value.Check(CopySummary, { ...(summary as object), mirror_latest_time: null })).toBe(true);
  });

  it("refuses counts that are not counts and a time that is not RFC 3339", () => {
    expect(Value.Check(CopySummary, { ...(summary as object), mirrored: -1 })).toBe(false);
    expect(Value.Check(CopySummary, { ...(summary as object), mirror_latest_time: "yesterday" })).toBe(false);
  });
});

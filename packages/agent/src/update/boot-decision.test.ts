import { UPDATE_TRIAL_MS } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { commitTrial, decideBoot } from "./boot-decision.js";
import type { ArtefactRef, BootRecord } from "./boot-record.js";

const now = new Date("2026-03-01T10:00:00Z");
const v1: ArtefactRef = {
  version: "0.1.1",
  file: "agent-0.1.1.mjs",
  sha256: "11".repeat(32),
  kind: "bundle",
};
const v2: ArtefactRef = {
  version: "0.2.0",
  file: "agent-0.2.0.mjs",
  sha256: "22".repeat(32),
  kind: "bundle",
};
const usable = () => undefined;
const decide = (
  record: BootRecord | undefined,
  problemOf: (ref: ArtefactRef) => string | undefined = usable,
) => decideBoot({ record, selfVersion: "0.1.0", now, problemOf });

describe("decideBoot", () => {
  it("runs itself without a record, and writes nothing", () => {
    expect(decide(undefined)).toEqual({ run: { kind: "self" }, notes: [] });
  });

  it("runs the active version when it is another one", () => {
    expect(decide({ format: 1, active: v1 })).toEqual({ run: { kind: "artefact", ref: v1 }, notes: [] });
  });

  it("runs itself when the active version is its own", () => {
    expect(
      decideBoot({ record: { format: 1, active: v1 }, selfVersion: "0.1.1", now, problemOf: usable }).run,
    ).toEqual({ kind: "self" });
  });

  it("runs itself, saying why, when the active artefact is missing or altered", () => {
    const decision = decide(
      { format: 1, active: v1 },
      () => "agent-0.1.1.mjs does not have the recorded SHA-256",
    );
    expect(decision.run).toEqual({ kind: "self" });
    expect(decision.write).toBeUndefined();
    expect(decision.notes[0]).toMatch(
      /0\.1\.1 cannot run \(agent-0\.1\.1\.mjs does not have the recorded SHA-256\)/,
    );
  });

  it("starts a trial once: marks it started and sets the deadline", () => {
    const record: BootRecord = { format: 1, active: v1, trial: { ...v2, staged_at: "2026-03-01T09:59:00Z" } };
    const decision = decide(record);
    expect(decision.run).toEqual({
      kind: "artefact",
      ref: v2,
      trialDeadline: new Date(now.getTime() + UPDATE_TRIAL_MS),
    });
    expect(decision.write).toEqual({ ...record, trial: { ...record.trial, started_at: now.toISOString() } });
  });

  it("sets the deadline from the trial period it is given", () => {
    const record: BootRecord = { format: 1, active: v1, trial: { ...v2, staged_at: "2026-03-01T09:59:00Z" } };
    const decision = decideBoot({ record, selfVersion: "0.1.0", now, trialMs: 3_000, problemOf: usable });
    expect(decision.run).toEqual({
      kind: "artefact",
      ref: v2,
      trialDeadline: new Date(now.getTime() + 3_000),
    });
  });

  it("rolls back a trial that started before and never committed, to the active version", () => {
    const trial = { ...v2, staged_at: "2026-03-01T09:59:00Z", started_at: "2026-03-01T09:59:30Z" };
    const decision = decide({ format: 1, active: v1, trial });
    expect(decision.run).toEqual({ kind: "artefact", ref: v1 });
    expect(decision.write).toEqual({
      format: 1,
      active: v1,
      failed: {
        version: "0.2.0",
        sha256: v2.sha256,
        reason: "version 0.2.0 stopped before the server accepted its first connection",
        at: now.toISOString(),
        reported: false,
      },
    });
  });

  it("rolls back to itself when there is no active version", () => {
    const trial = { ...v2, staged_at: "x", started_at: "y" };
    const decision = decide({ format: 1, trial });
    expect(decision.run).toEqual({ kind: "self" });
    expect(decision.write?.trial).toBeUndefined();
    expect(decision.write?.failed?.version).toBe("0.2.0");
  });

  it("rolls back a trial whose artefact cannot run, without starting it", () => {
    const decision = decide({ format: 1, trial: { ...v2, staged_at: "x" } }, (ref) =>
      ref.version === "0.2.0" ? "agent-0.2.0.mjs is missing" : undefined,
    );
    expect(decision.run).toEqual({ kind: "self" });
    expect(decision.write?.failed?.reason).toBe(
      "version 0.2.0 could not be started: agent-0.2.0.mjs is missing",
    );
  });

  it("keeps an earlier failure while nothing new failed", () => {
    const failed = { version: "0.1.9", sha256: "99".repeat(32), reason: "r", at: "t", reported: true };
    expect(decide({ format: 1, active: v1, failed })).toEqual({
      run: { kind: "artefact", ref: v1 },
      notes: [],
    });
  });
});

describe("commitTrial", () => {
  it("makes the trial active", () => {
    const record: BootRecord = { format: 1, active: v1, trial: { ...v2, staged_at: "x", started_at: "y" } };
    expect(commitTrial(record, "0.2.0")).toEqual({ format: 1, active: v2 });
  });
  it("does nothing for another version", () => {
    expect(commitTrial({ format: 1, trial: { ...v2, staged_at: "x" } }, "0.1.0")).toBeUndefined();
    expect(commitTrial({ format: 1, active: v1 }, "0.1.1")).toBeUndefined();
  });
});

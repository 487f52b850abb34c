import { describe, expect, it } from "vitest";
import { fixture, recordedScenario } from "../testing/job-run.js";
import { OUTAGE_0_18 } from "../testing/outage-output.js";
import { createLockReader, roundGoDuration } from "./lock-holder.js";

function holderOf(lines: readonly string[]) {
  const reader = createLockReader();
  for (const line of lines) {
    reader.observe(line);
  }
  return reader.holder();
}

describe("createLockReader", () => {
  it("reads the holder from restic 0.14's text", () => {
    const { pid } = recordedScenario("0.14.0").lock;
    const stderr = fixture("0.14.0", "err-locked-check").stderr.split("\n");
    expect(holderOf(stderr)).toEqual({
      pid,
      host: "vm",
      user: "root",
      exclusive: false,
      createdAt: "2026-11-23 09:59:18",
      age: "1s",
    });
  });

  it("reads it from restic 0.18's JSON exit_error", () => {
    const { pid } = recordedScenario("0.18.0").lock;
    const stderr = fixture("0.18.0", "err-locked-forget-json").stderr.split("\n");
    expect(holderOf(stderr)).toMatchObject({ pid, host: "vm", createdAt: "2026-11-23 09:59:55", age: "1s" });
  });

  it("reads the lock a backup left behind after an outage", () => {
    expect(holderOf(OUTAGE_0_18.locked)).toMatchObject({ pid: 17541, age: "52s" });
  });

  it("tells an exclusive lock", () => {
    expect(
      holderOf([
        "unable to create lock in backend: repository is already locked exclusively by PID 9 on nas by backup (UID 1, GID 1)",
      ]),
    ).toMatchObject({ pid: 9, host: "nas", user: "backup", exclusive: true });
  });

  it("finds nothing in other output", () => {
    expect(holderOf(["Fatal: wrong password or no key found"])).toBeUndefined();
  });
});

describe("roundGoDuration", () => {
  it.each([
    ["1m14.275917723s", "1m14s"],
    ["52.062416064s", "52s"],
    ["962.549076ms", "0s"],
    ["2h0m3.5s", "2h0m3s"],
  ])("%s is %s", (text, rounded) => {
    expect(roundGoDuration(text)).toBe(rounded);
  });
});

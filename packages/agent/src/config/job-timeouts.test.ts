import { JOB_KINDS } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { formatTimeout, jobTimeoutsFromEnv, parseJobTimeout, timeoutOf } from "./job-timeouts.js";

describe("job timeouts", () => {
  it("has a default for every kind: long for data work, short for init and unlock", () => {
    const { timeouts, problems } = jobTimeoutsFromEnv({}, JOB_KINDS);
    expect(problems).toEqual([]);
    expect(timeouts.backup).toBe(24 * 3_600_000);
    expect(timeouts.copy).toBe(24 * 3_600_000);
    expect(timeouts.drill).toBe(2 * 3_600_000);
    expect(timeouts.forget).toBe(3_600_000);
    expect(timeouts.init).toBe(10 * 60_000);
    expect(timeouts.unlock).toBe(10 * 60_000);
    for (const kind of JOB_KINDS) {
      expect(timeouts[kind], kind).toBeGreaterThan(0);
    }
  });

  it("reads FLEETBACK_JOB_TIMEOUT_<KIND>, keeps the default for a value it cannot read and says so", () => {
    const { timeouts, problems } = jobTimeoutsFromEnv(
      {
        FLEETBACK_JOB_TIMEOUT_BACKUP: "48h",
        FLEETBACK_JOB_TIMEOUT_CHECK: "off",
        FLEETBACK_JOB_TIMEOUT_INIT: "90",
        FLEETBACK_JOB_TIMEOUT_PRUNE: "soon",
      },
      JOB_KINDS,
    );
    expect(timeouts.backup).toBe(48 * 3_600_000);
    expect(timeouts.check).toBeNull();
    expect(timeouts.init).toBe(90_000);
    expect(timeouts.prune).toBe(24 * 3_600_000);
    expect(problems).toEqual([
      'FLEETBACK_JOB_TIMEOUT_PRUNE="soon" is not a duration such as 90s, 10m, 24h or off; using 24 h',
    ]);
  });

  it("parses and formats durations", () => {
    expect(parseJobTimeout("10m")).toBe(600_000);
    expect(parseJobTimeout("1.5h")).toBe(5_400_000);
    expect(parseJobTimeout("2d")).toBe(172_800_000);
    expect(parseJobTimeout("0")).toBeNull();
    expect(parseJobTimeout("-5m")).toBeUndefined();
    expect(formatTimeout(600_000)).toBe("10 min");
    expect(formatTimeout(5_400_000)).toBe("1 h 30 min");
    expect(formatTimeout(8_000)).toBe("8 s");
    expect(timeoutOf(undefined, "a-kind-added-later")).toBe(24 * 3_600_000);
  });
});

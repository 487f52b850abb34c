import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import { retryWhileDatabaseDown } from "./database-retry.js";

const refused = () =>
  Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });

describe("retryWhileDatabaseDown", () => {
  it("retries while the database is unreachable, then returns the work's result", async () => {
    let calls = 0;
    const retries: number[] = [];
    const result = await retryWhileDatabaseDown(
      async () => {
        calls += 1;
        if (calls < 3) {
          throw new Error("query failed", { cause: refused() });
        }
        return "stored";
      },
      { delaysMs: [1, 1, 1], onRetry: (_err, attempt) => retries.push(attempt) },
    );
    expect(result).toBe("stored");
    expect(retries).toEqual([1, 2]);
  });

  it("does not retry a query the database refused, and gives up after the last pause", async () => {
    let calls = 0;
    const syntax = Object.assign(new Error("syntax error"), { code: "42601" });
    await expect(
      retryWhileDatabaseDown(
        async () => {
          calls += 1;
          throw syntax;
        },
        { delaysMs: [1, 1] },
      ),
    ).rejects.toBe(syntax);
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      retryWhileDatabaseDown(
        async () => {
          calls += 1;
          throw refused();
        },
        { delaysMs: [1, 1] },
      ),
    ).rejects.toThrow("ECONNREFUSED");
    expect(calls).toBe(3);
  });

  it("pauses on the timers it was given: the retry waits for the pause to pass", async () => {
    const manual = createManualTimers();
    let calls = 0;
    let paused!: () => void;
    const pausing = new Promise<void>((resolve) => {
      paused = resolve;
    });
    const result = retryWhileDatabaseDown(
      async () => {
        calls += 1;
        if (calls === 1) {
          throw new Error("query failed", { cause: refused() });
        }
        return "stored";
      },
      { delaysMs: [60_000], timers: manual, onRetry: () => queueMicrotask(paused) },
    );
    await pausing;
    expect(manual.pendingDelays()).toEqual([60_000]);
    expect(calls).toBe(1);
    manual.advance(60_000);
    await expect(result).resolves.toBe("stored");
    expect(calls).toBe(2);
  });
});

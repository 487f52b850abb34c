/**
 * The test server runs the production runtime, tickers included: a ticker that was not wired
 * would leave the silent host online here.
 */
import { runDbSuite } from "@fleetback/db/testing";
import { OFFLINE_AFTER_MS } from "@fleetback/protocol";
import { expect, it, vi } from "vitest";
import { eventually } from "./testing/eventually.js";
import { readHost, seedHost } from "./testing/seed.js";
import { createTestDeps } from "./testing/test-deps.js";
import { startTestServer } from "./testing/test-server.js";

const PERIOD_MS = 10;

runDbSuite("runtime", (getDb) => {
  it("runs the offline sweeper on its own and stops it on close", async () => {
    const deps = await createTestDeps({ db: getDb() });
    // The tickers' intervals on vitest's clock: a tick comes when the test moves it, and after
    // close the clock can say no interval is left to tick, where a sleep could only hope so.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const server = await startTestServer({ deps, tickers: { periodMs: { "offline-sweeper": PERIOD_MS } } });
    const silentSince = () => new Date(deps.clock.now().getTime() - OFFLINE_AFTER_MS - 1);
    try {
      const silent = await seedHost(deps, { status: "online", lastSeenAt: silentSince() });
      // Some are there to count: the zero after close is not from intervals that escaped the fake.
      expect(vi.getTimerCount()).toBeGreaterThan(0);
      await eventually(
        async () => {
          // A tick each look: one tick may find the sweeper's advisory lock held, since on
          // PostgreSQL the lock is the whole database's and other test files' sweepers run too.
          vi.advanceTimersByTime(PERIOD_MS);
          return (await readHost(deps, silent.host.id))?.status;
        },
        (status) => status === "offline",
        // The bound only keeps a lost tick from hanging the run.
        { what: "the silent host marked offline by the ticker", timeoutMs: 20_000 },
      );
      expect(deps.logLines.some((line) => line.includes("host marked offline"))).toBe(true);

      await server.close();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
      await server.close();
      await deps.close();
    }
  });
});

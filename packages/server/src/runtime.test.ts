/**
 * The test server runs the production runtime, tickers included: a ticker that was not wired
 * would leave the silent host online here.
 */
import { runDbSuite } from "@fleetback/db/testing";
import { OFFLINE_AFTER_MS } from "@fleetback/protocol";
import { expect, it } from "vitest";
import { eventually } from "./testing/eventually.js";
import { readHost, seedHost } from "./testing/seed.js";
import { createTestDeps } from "./testing/test-deps.js";
import { startTestServer } from "./testing/test-server.js";

const PERIOD_MS = 10;

runDbSuite("runtime", (getDb) => {
  it("runs the offline sweeper on its own and stops it on close", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const server = await startTestServer({ deps, tickers: { periodMs: { "offline-sweeper": PERIOD_MS } } });
    const silentSince = () => new Date(deps.clock.now().getTime() - OFFLINE_AFTER_MS - 1);
    try {
      const silent = await seedHost(deps, { status: "online", lastSeenAt: silentSince() });
      await eventually(
        async () => (await readHost(deps, silent.host.id))?.status,
        (status) => status === "offline",
        { what: "the silent host marked offline by the ticker" },
      );
      expect(deps.logLines.some((line) => line.includes("host marked offline"))).toBe(true);

      await server.close();
      const later = await seedHost(deps, { name: "db-1", status: "online", lastSeenAt: silentSince() });
      // Absence can only be shown by waiting: ten periods in which a running sweeper would have swept.
      await new Promise((resolve) => setTimeout(resolve, 10 * PERIOD_MS));
      expect((await readHost(deps, later.host.id))?.status).toBe("online");
    } finally {
      await server.close();
      await deps.close();
    }
  });
});

/**
 * @module testing/server-suite
 * `runServerSuite(name, (server) => { it(...) })`: one describe per database engine (PGlite, and
 * PostgreSQL when TEST_DATABASE_URL is set), each with its own real server on port 0 for the
 * suite's tests. Tests share the database, so each seeds its own hosts.
 */
import { testEngines } from "@fleetback/db/testing";
import { afterAll, beforeAll, describe } from "vitest";
import { startTestServer, type TestServer, type TestServerOptions } from "./test-server.js";

/** `server` is usable inside tests and hooks of the suite, once its beforeAll has run. */
export function runServerSuite(
  name: string,
  define: (server: TestServer) => void,
  options: Omit<TestServerOptions, "engine" | "deps"> = {},
): void {
  for (const engine of testEngines()) {
    describe(`${name} (${engine})`, () => {
      let started: TestServer | undefined;
      const current = (): TestServer => {
        if (!started) {
          throw new Error("the suite's test server is not running (use it inside tests)");
        }
        return started;
      };
      beforeAll(async () => {
        started = await startTestServer({ ...options, engine });
      });
      afterAll(async () => {
        await started?.close();
      });
      define({
        get url() {
          return current().url;
        },
        get wsUrl() {
          return current().wsUrl;
        },
        get deps() {
          return current().deps;
        },
        get channel() {
          return current().channel;
        },
        get jobStreams() {
          return current().jobStreams;
        },
        close: () => current().close(),
      });
    });
  }
}

import { fleetbackTestConfig } from "../vitest.shared.js";

// Two files at a time: e2e tests mostly wait on real processes (restic, rest-server, agents,
// Chromium), so a second worker halves the wall time (1,573 s → 730 s on this 2-core machine)
// without a failure; every test already takes its own ports, directories and database.
export default fleetbackTestConfig(import.meta.dirname, {
  testTimeout: 180_000,
  // Starting rest-server, a server and Chromium in beforeAll takes seconds alone, and a minute when
  // the other worker runs a 2,000-agent storm beside it.
  hookTimeout: 180_000,
  fileParallelism: true,
  maxWorkers: 2,
  // Each file starts and stops its own processes and signal handlers; a fresh module graph per
  // file keeps one file's leftovers from the next.
  isolate: true,
  globalSetup: ["./src/support/global-setup.ts"],
});

import { fleetbackTestConfig } from "../vitest.shared.js";

// Three files at a time: e2e tests mostly wait on real processes (restic, rest-server, agents,
// Chromium, timers), and every test takes its own ports, directories and database. A second
// worker halved the wall time (1,573 s → 730 s on this 2-core machine); with the suite grown to
// 2,500 s of test time, two workers made this package the whole run's long pole (22m48s of a
// 24m12s run, the other packages done at 17m43s, the CPU 30 % idle). FLEETBACK_E2E_WORKERS
// overrides it.
export default fleetbackTestConfig(import.meta.dirname, {
  testTimeout: 180_000,
  // Starting rest-server, a server and Chromium in beforeAll takes seconds alone, and a minute when
  // the other worker runs a 2,000-agent storm beside it.
  hookTimeout: 180_000,
  fileParallelism: true,
  maxWorkers: Number(process.env.FLEETBACK_E2E_WORKERS ?? 3),
  // Each file starts and stops its own processes and signal handlers; a fresh module graph per
  // file keeps one file's leftovers from the next.
  isolate: true,
  globalSetup: ["./src/support/global-setup.ts"],
});

import { fleetbackTestConfig } from "../../vitest.shared.js";

// Two test files at a time: vitest's default on this 2-core machine is one, and the server's 114
// files were CI's longest path (25 min), most of it waiting on sockets, child processes and PGlite.
export default fleetbackTestConfig(import.meta.dirname, {
  setupFiles: ["./src/testing/test-setup.ts"],
  maxWorkers: 2,
});

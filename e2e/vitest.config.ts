import { fleetbackTestConfig } from "../vitest.shared.js";

export default fleetbackTestConfig(import.meta.dirname, {
  testTimeout: 180_000,
  fileParallelism: false,
  globalSetup: ["./src/support/global-setup.ts"],
});

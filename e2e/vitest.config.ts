import { fleetbackTestConfig } from "../vitest.shared.js";

export default fleetbackTestConfig(import.meta.dirname, { testTimeout: 120_000, fileParallelism: false });

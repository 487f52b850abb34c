import { fleetbackTestConfig } from "../../vitest.shared.js";

export default fleetbackTestConfig(import.meta.dirname, { setupFiles: ["./src/testing/test-setup.ts"] });

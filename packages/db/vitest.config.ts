import { fleetbackTestConfig } from "../../vitest.shared.js";

export default fleetbackTestConfig(import.meta.dirname, { setupFiles: ["./src/testing/vitest-setup.ts"] });

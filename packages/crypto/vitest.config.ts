import { fleetbackTestConfig } from "../../vitest.shared.js";

// password-hash.test.ts mocks ./argon2-pool.js; with a module graph shared between files that
// mock would reach the pool's own tests.
export default fleetbackTestConfig(import.meta.dirname, { isolate: true });

import { createRequire } from "node:module";
import { mergeConfig } from "vitest/config";
import { fleetbackTestConfig } from "../../vitest.shared.js";

// Tests import luxon as the bundle does (scripts/bundle.mjs): its CommonJS build, the one
// cron-parser requires, so cron.ts's Settings reach cron-parser's dates.
export default mergeConfig(fleetbackTestConfig(import.meta.dirname), {
  resolve: { alias: { luxon: createRequire(import.meta.url).resolve("luxon") } },
});

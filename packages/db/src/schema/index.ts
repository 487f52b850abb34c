/**
 * @module The whole drizzle schema. `packages/db/migrations/*.sql` creates the same tables; a
 * test compares both so they cannot drift.
 */
export * from "./alerts.js";
export * from "./audit.js";
export * from "./auth.js";
export * from "./catalog.js";
export * from "./cluster.js";
export * from "./deletion-holds.js";
export * from "./enrolment.js";
export * from "./evidence.js";
export * from "./hosts.js";
export * from "./jobs.js";
export * from "./metrics.js";
export * from "./pending-runs.js";
export * from "./policies.js";
export * from "./repository.js";
export * from "./repository-growth.js";
export * from "./repository-outages.js";
export * from "./rollouts.js";
export * from "./sources.js";

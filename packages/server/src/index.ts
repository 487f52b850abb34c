/**
 * @module @fleetback/server
 * Library entry for tests and embedding; the executable is main.ts.
 */

export { createApp } from "./app.js";
export type { AppDeps } from "./app-deps.js";
export { applyCatalogPart } from "./catalog/catalog-apply.js";
export { lineageKey } from "./catalog/catalog-keys.js";
export { parseCatalogQuery } from "./catalog/catalog-query.js";
export { searchCatalogue } from "./catalog/catalog-search.js";
export { fileHistory } from "./catalog/file-history.js";
export { type Clock, createManualClock, systemClock } from "./clock.js";
export { type Config, loadConfig, parseListen } from "./config.js";
export { buildDigest } from "./digest/digest-content.js";
export { digestText } from "./digest/digest-text.js";
export { RequestError } from "./errors.js";
export { evaluateFreshness, type GroupFreshness } from "./freshness/freshness.js";
export { listFleet } from "./hosts/fleet-view.js";
export { createIds } from "./ids.js";
export { createLogger } from "./log.js";
export type { PolicyBody } from "./policies/policy-spec.js";
export { createPolicy, previewPolicy, updatePolicy } from "./policies/policy-store.js";
export { type RunningServer, StartupError, startServer } from "./server.js";
export { replaceSnapshots } from "./snapshots/snapshot-store.js";

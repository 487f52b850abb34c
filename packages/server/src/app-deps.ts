/**
 * @module app-deps
 * What the HTTP app needs beyond ServerDeps. A type-only leaf: route modules import it, and it
 * imports no route, so app.ts and the routes do not import each other.
 */
import type { BootstrapState } from "./auth/bootstrap.js";
import type { ServerDeps } from "./deps.js";
import type { TreeListingOptions } from "./restore/tree-listing.js";

export interface Readiness {
  /** Resolves when the database answers; rejects with the reason otherwise. */
  check(): Promise<{ database: string }>;
}

export interface AppDeps extends ServerDeps {
  readiness: Readiness;
  bootstrap: BootstrapState;
  /** Tree browsing of the restore wizard (timeouts and cache bounds; tests shorten them). */
  treeListing?: TreeListingOptions;
}

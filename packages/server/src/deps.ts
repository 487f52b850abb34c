/**
 * @module deps
 * Everything a domain module may use, built once in the composition root (server.ts) and passed
 * down explicitly. Tests build the same object with a fake clock or a test database.
 */
import type { SigningKeyPair } from "@fleetback/crypto";
import type { Database } from "@fleetback/db";
import type { Views } from "@fleetback/web";
import type { BundleStore } from "./agent-artifacts/bundle-store.js";
import type { Clock } from "./clock.js";
import type { Config } from "./config.js";
import type { AgentHub } from "./hub/types.js";
import type { Ids } from "./ids.js";
import type { JobEvents } from "./jobs/job-events.js";
import type { Logger } from "./log.js";
import type { Notifier } from "./notifications/notifier-port.js";

export interface Keys {
  /** 32-byte key of data/secret.key; seals every secret at rest. */
  secret: Uint8Array;
}

export interface ServerDeps {
  config: Config;
  db: Database;
  log: Logger;
  clock: Clock;
  /** ULIDs and random bytes (ids.ts). */
  ids: Ids;
  keys: Keys;
  /** Ed25519 key of data/release.key; signs every agent bundle the server hands out. */
  releaseKey: SigningKeyPair;
  /** Agent bundles in data/agent-bundles, signed by releaseKey. */
  agentBundles: BundleStore;
  hub: AgentHub;
  /** Job status, progress and log notifications: the agent channel emits, job pages listen. */
  jobEvents: JobEvents;
  views: Views;
  /** Fans alerts out to notification channels in the background (notifications/notifier.ts). */
  notifier: Notifier;
}

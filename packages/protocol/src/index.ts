/**
 * @module @fleetback/protocol
 * The agent wire contract described in this package's PROTOCOL.md: constants, every message as a
 * TypeBox schema with its type, the per-direction catalogs and handler maps, and the frame codec.
 */
export * from "./agent-messages.js";
export * from "./catalog.js";
export * from "./codec.js";
export * from "./command-run.js";
export * from "./common.js";
export * from "./constants.js";
export * from "./copy-summary.js";
export * from "./drill-summary.js";
export * from "./dump.js";
export * from "./envelope.js";
export * from "./file-catalog.js";
export * from "./formats.js";
export * from "./handlers.js";
export * from "./protocol-error.js";
export * from "./restic-text.js";
export * from "./restore-order.js";
export * from "./server-messages.js";
export * from "./terminal-text.js";
export * from "./time.js";
export * from "./ulid.js";

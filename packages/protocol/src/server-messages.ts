/**
 * @module server-messages
 * Messages the server sends to the agent, and their catalog (wire type -> payload schema).
 */
import { type Static, Type } from "typebox";
import { CommandRun } from "./command-run.js";
import {
  Caps,
  CredentialSlot,
  NonEmptyString,
  Repository,
  ScheduleEntry,
  SnapshotId,
  SnapshotPath,
  TreeChildName,
  Ulid,
} from "./common.js";
import { DumpAck, DumpCancel, DumpRequest } from "./dump.js";
import { CatalogAck } from "./file-catalog.js";
import { ED25519_SIGNATURE_BASE64_PATTERN, HTTP_URL_PATTERN, SHA256_HEX_PATTERN } from "./formats.js";

const Absent = Type.Optional(Type.Never());

/** Credentials of one slot, optionally with the host-wide caps in the same frame. */
export const ConfigUpdateCredentials = Type.Object({
  slot: CredentialSlot,
  repository: Repository,
  caps: Type.Optional(Caps),
  /**
   * Protocol 12: these credentials serve this one job (a keeper's `kept` job), held apart from the
   * agent's own slots and forgotten when the job ends.
   */
  job_id: Type.Optional(Ulid),
  clear: Absent,
});
export type ConfigUpdateCredentials = Static<typeof ConfigUpdateCredentials>;

/** Caps alone, sent on hello and after the bandwidth PUT. */
export const ConfigUpdateCaps = Type.Object({
  caps: Caps,
  slot: Absent,
  repository: Absent,
  job_id: Absent,
  clear: Absent,
});
export type ConfigUpdateCaps = Static<typeof ConfigUpdateCaps>;

/**
 * Protocol 12: the agent forgets what the slot held. Sent to a host that became protected (a
 * keeper maintains its repository), on that change and at every hello, so delete authority pushed
 * earlier does not outlive the decision in the agent's memory.
 */
export const ConfigUpdateClear = Type.Object({
  slot: CredentialSlot,
  clear: Type.Literal(true),
  repository: Absent,
  caps: Absent,
  job_id: Absent,
});
export type ConfigUpdateClear = Static<typeof ConfigUpdateClear>;

export const ConfigUpdate = Type.Union([ConfigUpdateCredentials, ConfigUpdateCaps, ConfigUpdateClear]);
export type ConfigUpdate = Static<typeof ConfigUpdate>;

/** Replaces the agent's whole schedule state; the agent answers `schedule.ack` with the version. */
export const ScheduleSet = Type.Object({
  version: Type.Integer({ minimum: 0 }),
  schedules: Type.Array(ScheduleEntry),
});
export type ScheduleSet = Static<typeof ScheduleSet>;

export const CommandCancel = Type.Object({ job_id: Ulid });
export type CommandCancel = Static<typeof CommandCancel>;

export const CommandUpdate = Type.Object({
  version: NonEmptyString,
  /** Fetched with the agent's own bearer token. */
  url: Type.String({ pattern: HTTP_URL_PATTERN, description: "http(s) URL" }),
  sha256: Type.String({ pattern: SHA256_HEX_PATTERN, description: "lowercase hex SHA-256" }),
  /** Checked against the server's release key before the bundle replaces the running agent. */
  signature: Type.String({
    pattern: ED25519_SIGNATURE_BASE64_PATTERN,
    description: "base64 Ed25519 signature",
  }),
});
export type CommandUpdate = Static<typeof CommandUpdate>;

/**
 * Asks for the direct children of `path`; answered by `tree.list.result` with the same id. Since
 * protocol 4, `after` (a child name, the `next_after` of the previous page) asks for the children
 * that sort after it; the server sends it only to agents that sent it a `next_after`.
 */
export const TreeList = Type.Object({
  snapshot_id: SnapshotId,
  path: SnapshotPath,
  after: Type.Optional(TreeChildName),
});
export type TreeList = Static<typeof TreeList>;

/**
 * `code` is any non-empty string on the wire: new codes may be added (see ERROR_CODES), and an
 * older agent must still be able to read the message of a code it does not know.
 */
export const ErrorMessage = Type.Object({
  code: NonEmptyString,
  message: Type.String(),
  help_url: Type.Optional(Type.String({ pattern: HTTP_URL_PATTERN, description: "http(s) URL" })),
  /** The id of the frame this error answers, when that id could be read. */
  request_id: Type.Optional(Ulid),
});
export type ErrorMessage = Static<typeof ErrorMessage>;

/** Server -> agent. Adding a type here forces every `ServerMessageHandlers` map to handle it. */
export const ServerMessages = {
  "config.update": ConfigUpdate,
  "schedule.set": ScheduleSet,
  "command.run": CommandRun,
  "command.cancel": CommandCancel,
  "command.update": CommandUpdate,
  "tree.list": TreeList,
  "dump.request": DumpRequest,
  "dump.ack": DumpAck,
  "dump.cancel": DumpCancel,
  "catalog.ack": CatalogAck,
  error: ErrorMessage,
} as const;
export type ServerMessages = typeof ServerMessages;
export type ServerMessageType = keyof ServerMessages;
export type ServerPayload<K extends ServerMessageType = ServerMessageType> = Static<ServerMessages[K]>;

/**
 * @module envelope
 * The frame around every message, `{"id", "type", "payload"}`, and the envelope types derived from
 * the two catalogs: a discriminated union on `type` per direction, so `switch (m.type)` narrows
 * the payload.
 */
import { type Static, type TSchema, Type } from "typebox";
import type { AgentMessages, AgentMessageType } from "./agent-messages.js";
import { NonEmptyString, Ulid } from "./common.js";
import type { ServerMessages, ServerMessageType } from "./server-messages.js";

/** The payload's own shape is checked against the catalog entry of `type`. */
export const Envelope = Type.Object({
  id: Ulid,
  type: NonEmptyString,
  payload: Type.Record(Type.String(), Type.Unknown(), { description: "object" }),
});
export type Envelope = Static<typeof Envelope>;

/** Named after who sends: `agent-to-server` frames are what the server decodes. */
export type Direction = "agent-to-server" | "server-to-agent";

export type MessageCatalog = Readonly<Record<string, TSchema>>;

export type EnvelopeOf<C extends MessageCatalog, K extends keyof C & string = keyof C & string> = {
  [P in K]: { id: string; type: P; payload: Static<C[P]> };
}[K];

export type AgentEnvelope<K extends AgentMessageType = AgentMessageType> = EnvelopeOf<AgentMessages, K>;
export type ServerEnvelope<K extends ServerMessageType = ServerMessageType> = EnvelopeOf<ServerMessages, K>;
export type AnyEnvelope = AgentEnvelope | ServerEnvelope;

export type MessageType = AgentMessageType | ServerMessageType;

export type PayloadOf<K extends MessageType> = K extends AgentMessageType
  ? Static<AgentMessages[K]>
  : K extends ServerMessageType
    ? Static<ServerMessages[K]>
    : never;

/**
 * @module handlers
 * Handler maps derived from the catalogs: a map that misses a message type does not compile, so
 * adding a message to the contract points at every place that must learn about it.
 */
import type { Static } from "typebox";
import type { AgentMessages, AgentMessageType } from "./agent-messages.js";
import type { AgentEnvelope, EnvelopeOf, MessageCatalog, ServerEnvelope } from "./envelope.js";
import type { ServerMessages, ServerMessageType } from "./server-messages.js";

export type MessageHandlers<C extends MessageCatalog, R> = {
  [K in keyof C & string]: (payload: Static<C[K]>, envelope: EnvelopeOf<C, K>) => R;
};

/** What the server implements. */
export type AgentMessageHandlers<R = void> = MessageHandlers<AgentMessages, R>;
/** What the agent implements. */
export type ServerMessageHandlers<R = void> = MessageHandlers<ServerMessages, R>;

/** Calls the handler of the envelope's type, in the catalog of either direction. */
function dispatchMessage<C extends MessageCatalog, R, K extends keyof C & string>(
  handlers: MessageHandlers<C, R>,
  envelope: EnvelopeOf<C, K>,
): R {
  const handler: (payload: Static<C[K]>, envelope: EnvelopeOf<C, K>) => R = handlers[envelope.type];
  return handler(envelope.payload, envelope);
}

/** Calls the server's handler of the envelope's type. */
export function dispatchAgentMessage<R, K extends AgentMessageType>(
  handlers: AgentMessageHandlers<R>,
  envelope: AgentEnvelope<K>,
): R {
  return dispatchMessage(handlers, envelope);
}

/** Calls the agent's handler of the envelope's type. */
export function dispatchServerMessage<R, K extends ServerMessageType>(
  handlers: ServerMessageHandlers<R>,
  envelope: ServerEnvelope<K>,
): R {
  return dispatchMessage(handlers, envelope);
}

/**
 * @module catalog
 * Looks a wire type up in the catalog of one direction, or of both. Lookups use own properties
 * only: a frame typed "constructor" or "__proto__" must be an unknown type, not Object's internals.
 */
import type { TSchema } from "typebox";
import { AgentMessages } from "./agent-messages.js";
import type { Direction, MessageType } from "./envelope.js";
import { ServerMessages } from "./server-messages.js";

const catalogs: Readonly<Record<Direction, Readonly<Record<string, TSchema>>>> = {
  "agent-to-server": AgentMessages,
  "server-to-agent": ServerMessages,
};

export function directionOf(type: string): Direction | undefined {
  if (Object.hasOwn(AgentMessages, type)) {
    return "agent-to-server";
  }
  return Object.hasOwn(ServerMessages, type) ? "server-to-agent" : undefined;
}

export function isMessageType(type: string, direction?: Direction): type is MessageType {
  const found = directionOf(type);
  return found !== undefined && (direction === undefined || direction === found);
}

/** The payload schema of `type`, if `type` belongs to `direction` (or to either, when omitted). */
export function payloadSchemaOf(type: string, direction?: Direction): TSchema | undefined {
  const found = directionOf(type);
  if (found === undefined || (direction !== undefined && direction !== found)) {
    return undefined;
  }
  return catalogs[found][type];
}

/** Every wire type of a direction, in catalog order. */
export function messageTypesOf(direction: Direction): readonly string[] {
  return Object.keys(catalogs[direction]);
}

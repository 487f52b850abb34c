/**
 * @module codec
 * `decode` turns one WebSocket frame into a validated, typed envelope or a typed error and never
 * throws: a peer can send anything. `encode` validates too and throws `ProtocolError`, because
 * only a bug on our side produces an invalid outgoing message.
 */
import { payloadSchemaOf } from "./catalog.js";
import { ERROR_CODES, MAX_FRAME_BYTES } from "./constants.js";
import {
  type AgentEnvelope,
  type AnyEnvelope,
  type Direction,
  Envelope,
  type MessageType,
  type PayloadOf,
  type ServerEnvelope,
} from "./envelope.js";
import { isUlid } from "./formats.js";
import { exceedsFrameLimit, readFrame } from "./frame.js";
import {
  type DecodeError,
  type DecodeResult,
  invalidMessage,
  type PayloadResult,
  ProtocolError,
} from "./protocol-error.js";
import { explainMismatch, matchSchema, stripUnknown } from "./schema-check.js";
import { newMessageId } from "./ulid.js";

/** Longer types are not echoed back: the error would carry up to a megabyte of the peer's junk. */
const MAX_ECHOED_TYPE_LENGTH = 64;

function fail(error: DecodeError): { ok: false; error: DecodeError } {
  return { ok: false, error };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function decodeFrame(data: string | Uint8Array, direction: Direction | undefined): DecodeResult<AnyEnvelope> {
  const frame = readFrame(data);
  if (!frame.ok) {
    return fail(invalidMessage(frame.reason));
  }
  const value = frame.value;
  if (!isRecord(value)) {
    return fail(invalidMessage("frame is not a JSON object"));
  }
  const context: Pick<DecodeError, "request_id" | "type"> = {};
  if (isUlid(value.id)) {
    context.request_id = value.id;
  }
  if (typeof value.type === "string" && value.type.length <= MAX_ECHOED_TYPE_LENGTH) {
    context.type = value.type;
  }
  if (matchSchema(Envelope, value) === undefined) {
    const problem = explainMismatch(Envelope, value, "");
    return fail(invalidMessage(problem.message, { path: problem.path, ...context }));
  }
  const type = String(value.type);
  const schema = payloadSchemaOf(type, direction);
  if (schema === undefined) {
    const shown = context.type === undefined ? "" : ` ${JSON.stringify(context.type)}`;
    const where = direction === undefined ? "" : ` for ${direction}`;
    return fail({
      code: ERROR_CODES.unknownType,
      message: `type: unknown message type${shown}${where}`,
      path: "type",
      ...context,
    });
  }
  const member = matchSchema(schema, value.payload);
  if (member === undefined) {
    const problem = explainMismatch(schema, value.payload, "payload");
    return fail(invalidMessage(problem.message, { path: problem.path, ...context }));
  }
  const payload = stripUnknown(member, value.payload);
  // The one place where validated data meets its static type.
  return { ok: true, message: { id: String(value.id), type, payload } as AnyEnvelope };
}

/**
 * Decodes one frame. With a direction, types of the other direction are `unknown_type`.
 * Never throws: whatever goes wrong comes back as `{ ok: false, error }`.
 */
export function decode(data: string | Uint8Array): DecodeResult<AnyEnvelope>;
export function decode(data: string | Uint8Array, direction: "agent-to-server"): DecodeResult<AgentEnvelope>;
export function decode(data: string | Uint8Array, direction: "server-to-agent"): DecodeResult<ServerEnvelope>;
export function decode(data: string | Uint8Array, direction?: Direction): DecodeResult<AnyEnvelope>;
export function decode(data: string | Uint8Array, direction?: Direction): DecodeResult<AnyEnvelope> {
  try {
    return decodeFrame(data, direction);
  } catch {
    // Defence in depth: nothing above is expected to throw, but a socket loop must never see it.
    return fail(invalidMessage("frame could not be decoded"));
  }
}

/** What the server calls on every frame from an agent. */
export function decodeAgentMessage(data: string | Uint8Array): DecodeResult<AgentEnvelope> {
  return decode(data, "agent-to-server");
}

/** What the agent calls on every frame from the server. */
export function decodeServerMessage(data: string | Uint8Array): DecodeResult<ServerEnvelope> {
  return decode(data, "server-to-agent");
}

/**
 * Validates a payload that did not come through `decode` (a stored or relayed one). Returns a
 * copy with unknown properties removed; `value` itself is left as it was.
 */
export function validatePayload<K extends MessageType>(type: K, value: unknown): PayloadResult<PayloadOf<K>> {
  try {
    const schema = payloadSchemaOf(type);
    if (schema === undefined) {
      return fail({ code: ERROR_CODES.unknownType, message: "type: unknown message type", path: "type" });
    }
    const member = matchSchema(schema, value);
    if (member === undefined) {
      const problem = explainMismatch(schema, value, "payload");
      return fail(invalidMessage(problem.message, { path: problem.path, type }));
    }
    return { ok: true, payload: stripUnknown(member, structuredClone(value)) as PayloadOf<K> };
  } catch {
    return fail(invalidMessage("payload: not plain JSON data", { path: "payload", type }));
  }
}

function byKey([a]: [string, unknown], [b]: [string, unknown]): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sorted keys make the output independent of how the caller happened to build the object. */
function sortedKeys(_key: string, value: unknown): unknown {
  if (!isRecord(value)) {
    return value;
  }
  return Object.fromEntries(Object.entries(value).sort(byKey));
}

/**
 * Encodes one message as `{"id","type","payload"}` with the payload's keys sorted. Unknown
 * properties are dropped (so a spread database row cannot leak a column onto the wire). Throws
 * `ProtocolError` for an unknown type, an invalid id or payload, or a frame over MAX_FRAME_BYTES.
 */
export function encode<K extends MessageType>(
  type: K,
  payload: PayloadOf<K>,
  id: string = newMessageId(),
): string {
  const schema = payloadSchemaOf(type);
  if (schema === undefined) {
    throw new ProtocolError({
      code: ERROR_CODES.unknownType,
      message: `type: unknown message type`,
      path: "type",
    });
  }
  if (!isUlid(id)) {
    throw new ProtocolError(invalidMessage("id: expected ULID", { path: "id", type }));
  }
  const member = matchSchema(schema, payload);
  if (member === undefined) {
    const problem = explainMismatch(schema, payload, "payload");
    throw new ProtocolError(invalidMessage(problem.message, { path: problem.path, type }));
  }
  let text: string;
  try {
    const clean = stripUnknown(member, structuredClone(payload));
    text = `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"payload":${JSON.stringify(clean, sortedKeys)}}`;
  } catch (cause) {
    throw new ProtocolError(invalidMessage("payload: not serialisable as JSON", { path: "payload", type }), {
      cause,
    });
  }
  if (exceedsFrameLimit(text)) {
    throw new ProtocolError(invalidMessage(`frame exceeds ${MAX_FRAME_BYTES} bytes`, { type }));
  }
  return text;
}

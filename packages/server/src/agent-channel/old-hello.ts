/**
 * @module agent-channel/old-hello
 * An agent older than MIN_AGENT_PROTOCOL_VERSION may send a hello that today's schema refuses (a
 * field it never had). It must still learn that it is too old, not that its frame is invalid:
 * only ErrProtocolTooOld makes it stop reconnecting and print the upgrade link.
 */
import { MIN_AGENT_PROTOCOL_VERSION } from "@fleetback/protocol";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The protocol_version of a hello frame that failed validation, when it is an integer below the
 * minimum; undefined otherwise. Only called after the decoder has read the frame as JSON (so it is
 * at most MAX_FRAME_BYTES).
 */
export function tooOldHelloVersion(data: string | Uint8Array): number | undefined {
  let value: unknown;
  try {
    value = JSON.parse(typeof data === "string" ? data : new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
  if (!isRecord(value) || value.type !== "hello" || !isRecord(value.payload)) {
    return undefined;
  }
  const version = value.payload.protocol_version;
  return typeof version === "number" && Number.isInteger(version) && version < MIN_AGENT_PROTOCOL_VERSION
    ? version
    : undefined;
}

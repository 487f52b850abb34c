/**
 * @module protocol-error
 * The two ways a frame or payload can be refused. `decode` returns a `DecodeError` as a value (a
 * peer sending garbage is expected); `encode` throws a `ProtocolError` (sending garbage is a bug).
 */
import { ERROR_CODES } from "./constants.js";

export type DecodeErrorCode = typeof ERROR_CODES.invalidMessage | typeof ERROR_CODES.unknownType;

/**
 * Field names match the `error` message payload, so a server can answer a bad frame with
 * `encode("error", { code, message, request_id })` straight from it.
 */
export interface DecodeError {
  code: DecodeErrorCode;
  /** Names the failing field: "payload/protocol_version: expected integer". */
  message: string;
  /** The failing field alone: "payload/protocol_version", "id", "type". */
  path?: string;
  /** The envelope id, when it could be read, so the answer can correlate. */
  request_id?: string;
  /** The envelope type, when it could be read. */
  type?: string;
}

export type DecodeResult<M> = { ok: true; message: M } | { ok: false; error: DecodeError };
export type PayloadResult<P> = { ok: true; payload: P } | { ok: false; error: DecodeError };

export class ProtocolError extends Error {
  override readonly name = "ProtocolError";
  readonly code: DecodeErrorCode;
  readonly path: string | undefined;
  readonly context: { type?: string };

  constructor(error: DecodeError, options?: { cause?: unknown }) {
    super(error.message, options);
    this.code = error.code;
    this.path = error.path;
    this.context = error.type === undefined ? {} : { type: error.type };
  }
}

export function invalidMessage(
  message: string,
  fields: Omit<DecodeError, "code" | "message"> = {},
): DecodeError {
  return { code: ERROR_CODES.invalidMessage, message, ...fields };
}

/**
 * @module errors
 * The few typed errors a request can end in. Routes throw them; one mapper (app.onError) turns
 * them into JSON for /api and into a toast for htmx posts. Anything else thrown is a bug and
 * answers a bare 500 that never echoes its message.
 *
 * The code → status table is a public contract: API clients and tests match on these strings, so
 * a code is only ever added, never renamed or moved to another status.
 */
import { type Static, Type } from "typebox";

const STATUS = {
  invalid: 400,
  unauthorised: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  too_large: 413,
  uri_too_long: 414,
  // A plain GET of a WebSocket path that passed its role check (see job-stream).
  upgrade_required: 426,
  rate_limited: 429,
  // Only the mapper answers this, for a bug; no route throws it.
  internal: 500,
  agent_error: 502,
  unavailable: 503,
  timeout: 504,
} as const;

const ERROR_CODES = Object.keys(STATUS) as Array<keyof typeof STATUS>;

export const ErrorCode = Type.Enum(ERROR_CODES);
export type ErrorCode = keyof typeof STATUS;
export type ErrorStatus = (typeof STATUS)[ErrorCode];
export type RequestErrorCode = Exclude<ErrorCode, "internal">;

/** Every JSON error the server answers has this shape. */
export const ErrorBody = Type.Object({
  code: ErrorCode,
  message: Type.String(),
  request_id: Type.Optional(Type.String()),
  details: Type.Optional(Type.Unknown()),
});
export type ErrorBody = Static<typeof ErrorBody>;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(STATUS, value);
}

export function statusOf(code: ErrorCode): ErrorStatus {
  return STATUS[code];
}

/** The one builder of error bodies; absent options leave their keys out. */
export function errorBody(
  code: ErrorCode,
  message: string,
  options: { requestId?: string | undefined; details?: unknown } = {},
): ErrorBody {
  const body: ErrorBody = { code, message };
  if (options.requestId !== undefined) {
    body.request_id = options.requestId;
  }
  if (options.details !== undefined) {
    body.details = options.details;
  }
  return body;
}

export class RequestError extends Error {
  readonly code: RequestErrorCode;
  readonly details: unknown;
  readonly headers: Record<string, string>;

  constructor(
    code: RequestErrorCode,
    message: string,
    options: { details?: unknown; cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "RequestError";
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  get status(): ErrorStatus {
    return statusOf(this.code);
  }
}

export const invalid = (message: string, details?: unknown) =>
  new RequestError("invalid", message, { details });
export const notFound = (message: string) => new RequestError("not_found", message);
export const conflict = (message: string, details?: unknown) =>
  new RequestError("conflict", message, { details });
export const forbidden = (message: string) => new RequestError("forbidden", message);
export const unavailable = (message: string) => new RequestError("unavailable", message);

export function isRequestError(value: unknown): value is RequestError {
  return value instanceof RequestError;
}

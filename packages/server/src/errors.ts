/**
 * @module errors
 * The few typed errors a request can end in. Routes throw them; one mapper (app.onError) turns
 * them into JSON for /api and into a toast for htmx posts. Anything else thrown is a bug and
 * answers a bare 500 that never echoes its message.
 */

export type RequestErrorCode =
  | "invalid"
  | "unauthorised"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "gone"
  | "too_large"
  | "uri_too_long"
  | "rate_limited"
  | "unavailable";

const STATUS: Record<RequestErrorCode, 400 | 401 | 403 | 404 | 409 | 410 | 413 | 414 | 429 | 503> = {
  invalid: 400,
  unauthorised: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  too_large: 413,
  uri_too_long: 414,
  rate_limited: 429,
  unavailable: 503,
};

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

  get status(): 400 | 401 | 403 | 404 | 409 | 410 | 413 | 414 | 429 | 503 {
    return STATUS[this.code];
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

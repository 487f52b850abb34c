/**
 * @module log
 * Structured JSON logs (pino). Every field that can carry a credential is censored by path, and
 * URLs pass through redactUrl before they are logged, so a secret never reaches a log line.
 * Errors go through one serializer that drops the bound values of failed queries (drizzle's
 * `params` and the "params:" line of its message, postgres.js `parameters`, a violation's
 * `detail`): they held token hashes and megabytes of a hostile agent's hello.
 */
import { type DestinationStream, type Logger, pino } from "pino";
import type { LogLevel } from "./config.js";

export type { Logger };

/** Paths pino censors wherever they appear (two levels deep is where our objects carry them). */
export const REDACTED_PATHS = [
  "password",
  "*.password",
  "*.*.password",
  "token",
  "*.token",
  "*.*.token",
  "agent_token",
  "*.agent_token",
  "bootstrap_token",
  "*.bootstrap_token",
  "authorization",
  "*.authorization",
  "*.headers.authorization",
  "*.headers.cookie",
  '*.headers["set-cookie"]',
  "cookie",
  "repository.password",
  "*.repository.password",
  "login_password",
  "*.login_password",
  "*.*.login_password",
  "pre_hook",
  "post_hook",
  "*.pre_hook",
  "*.post_hook",
  "secret",
  "*.secret",
];

/** Keys of driver and ORM errors that carry a query's values (or, in `detail`, a row's). */
const QUERY_VALUE_KEYS = new Set(["parameters", "params", "args", "detail"]);
/** Long enough for any query of ours; a hostile value inlined into SQL text is cut. */
const MAX_ERROR_TEXT = 4_000;
const MAX_CAUSE_DEPTH = 5;

/** drizzle's DrizzleQueryError message ends in "params: <every value>"; the stack repeats it. */
function withoutParamsLine(text: string): string {
  return text.replace(/\nparams: [\s\S]*?(?=\n {4}at |$)/, "\nparams: [redacted]").slice(0, MAX_ERROR_TEXT);
}

function scrubError(value: unknown, depth: number): unknown {
  if (typeof value !== "object" || value === null || depth > MAX_CAUSE_DEPTH) {
    return value;
  }
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (QUERY_VALUE_KEYS.has(key)) {
      out[key] = "[redacted]";
    } else if (key === "cause") {
      out[key] = scrubError(field, depth + 1);
    } else if (typeof field === "string") {
      out[key] =
        key === "message" || key === "stack" ? withoutParamsLine(field) : field.slice(0, MAX_ERROR_TEXT);
    } else {
      out[key] = field;
    }
  }
  return out;
}

/** pino's own serializer (type, message, stack, causes, own fields), then the values dropped. */
export function serializeError(err: unknown): unknown {
  const serialized = err instanceof Error ? pino.stdSerializers.err(err) : err;
  return scrubError(serialized, 0);
}

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "fleetback-server" },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      serializers: { err: serializeError, error: serializeError },
    },
    destination,
  );
}

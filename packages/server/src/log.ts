/**
 * @module log
 * Structured JSON logs (pino). Every field that can carry a credential is censored by path, and
 * URLs pass through redactUrl before they are logged, so a secret never reaches a log line.
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
  "pre_hook",
  "post_hook",
  "*.pre_hook",
  "*.post_hook",
  "secret",
  "*.secret",
];

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "fleetback-server" },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    },
    destination,
  );
}

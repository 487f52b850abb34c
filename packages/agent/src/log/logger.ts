/**
 * @module log/logger
 * The agent's log: JSON lines on stderr, which systemd's journal keeps. Callers pass only fields
 * they know to be free of secrets; credentials are never handed to the logger at all, so there is
 * no redaction list to keep in sync here.
 */
import type { Clock } from "../time/clock.js";

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type LogFields = Record<string, string | number | boolean | null | undefined | readonly string[]>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

export interface JsonLoggerOptions {
  write: (line: string) => void;
  level?: LogLevel;
  clock: Clock;
}

export function createJsonLogger(options: JsonLoggerOptions): Logger {
  const threshold = LOG_LEVELS.indexOf(options.level ?? "info");
  const emit = (level: LogLevel) => (message: string, fields?: LogFields) => {
    if (LOG_LEVELS.indexOf(level) < threshold) {
      return;
    }
    const entry = { time: options.clock.now().toISOString(), level, msg: message, ...fields };
    options.write(`${JSON.stringify(entry)}\n`);
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}

/** A logger that drops everything, for library callers that do not care. */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

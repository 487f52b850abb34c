/**
 * @module testing/memory-logger
 * A Logger that keeps entries for assertions, including "no secret in any log line".
 */
import type { LogFields, Logger, LogLevel } from "../log/logger.js";

export interface LogEntry {
  level: LogLevel;
  message: string;
  fields: LogFields;
}

export interface MemoryLogger extends Logger {
  readonly entries: LogEntry[];
  /** Everything logged, serialised: search it for what must never appear. */
  text(): string;
}

export function createMemoryLogger(): MemoryLogger {
  const entries: LogEntry[] = [];
  const at =
    (level: LogLevel) =>
    (message: string, fields: LogFields = {}) => {
      entries.push({ level, message, fields });
    };
  return {
    entries,
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    text: () => entries.map((entry) => JSON.stringify(entry)).join("\n"),
  };
}

#!/usr/bin/env node
/**
 * @module main
 * Composition root of fleetback-server: configuration, logger, start-up, signals. An operator's
 * mistake (bad variable, unreadable key file, unreachable database) ends in one clear line on
 * stderr and a non-zero exit, never a stack trace.
 */
import { loadConfig } from "./config.js";
import { createLogger } from "./log.js";
import { StartupError, startServer } from "./server.js";

const EXIT_CONFIG = 2;
const EXIT_STARTUP = 1;

async function main(): Promise<void> {
  const loaded = loadConfig(process.env);
  if (!loaded.ok) {
    process.stderr.write(`fleetback: invalid configuration: ${loaded.errors.join("; ")}\n`);
    process.exit(EXIT_CONFIG);
  }
  const config = loaded.config;
  const log = createLogger(config.logLevel);

  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(config, { log });
  } catch (err) {
    const message =
      err instanceof StartupError ? err.message : "unexpected error during start-up (see the log)";
    if (!(err instanceof StartupError)) {
      log.fatal({ err }, "start-up failed");
    }
    process.stderr.write(`fleetback: ${message}\n`);
    process.exit(EXIT_STARTUP);
  }

  log.info({ url: server.url, base_url: server.baseUrl }, "listening");
  // One write, so a reader that sees the address also sees how to create the first admin.
  const lines = [`\nFleetback is running at ${server.baseUrl}/`];
  if (server.bootstrapToken) {
    // Printed, never logged: the token creates the first admin and is burned when used.
    lines.push(
      "No admin exists yet. Create the first one (this link works once):",
      `  ${server.baseUrl}/bootstrap?token=${encodeURIComponent(server.bootstrapToken)}`,
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      return;
    }
    stopping = true;
    log.info({ signal }, "shutting down");
    const force = setTimeout(() => {
      log.error("shutdown took longer than 10 s; exiting anyway");
      process.exit(1);
    }, 10_000);
    force.unref();
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, "error during shutdown");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

void main();

#!/usr/bin/env node
/**
 * @module main
 * Composition root of fleetback-server: configuration, logger, start-up, signals. An operator's
 * mistake (bad variable, unreadable key file, unreachable database) ends in one clear line on
 * stderr and a non-zero exit, never a stack trace.
 */

import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { systemTimers } from "@fleetback/protocol";
import { importRelease, ReleaseImportError } from "./agent-artifacts/release-import.js";
import { systemClock } from "./clock.js";
import { type Config, loadConfig } from "./config.js";
import { createLogger } from "./log.js";
import { installProcessGuard } from "./process-guard.js";
import { openAgentStore, StartupError, startServer } from "./server.js";

const EXIT_CONFIG = 2;
const EXIT_STARTUP = 1;

async function main(): Promise<void> {
  const loaded = loadConfig(process.env);
  if (!loaded.ok) {
    process.stderr.write(`fleetback: invalid configuration: ${loaded.errors.join("; ")}\n`);
    process.exit(EXIT_CONFIG);
  }
  const config = loaded.config;
  const [command, ...args] = process.argv.slice(2);
  if (command === "import-release") {
    await importReleaseCommand(config, args);
    return;
  }
  if (command !== undefined) {
    process.stderr.write(
      `fleetback: unknown command "${command}"\nusage: fleetback-server [import-release <release dir>]\n`,
    );
    process.exit(EXIT_CONFIG);
  }
  const log = createLogger(config.logLevel);
  installProcessGuard(log);

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
  if (server.bootstrapToken && config.bootstrapToken !== undefined) {
    // A token the operator configured (often a secret file, kept out of the container's
    // environment) is theirs already: printing it would put it in `docker logs`.
    lines.push(
      "No admin exists yet. Create the first one with the configured bootstrap token (it works once):",
      `  ${server.baseUrl}/bootstrap?token=<FLEETBACK_BOOTSTRAP_TOKEN>`,
    );
  } else if (server.bootstrapToken) {
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
    systemTimers.after(
      10_000,
      () => {
        log.error("shutdown took longer than 10 s; exiting anyway");
        process.exit(1);
      },
      { unref: true },
    );
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

/**
 * `fleetback-server import-release <dir>`: stores a `pnpm release` directory in the data dir's
 * agent store (FLEETBACK_DATA_DIR, as the server uses it), printing one line per artefact. Safe
 * while a server runs on the same data dir; running it twice imports nothing the second time.
 */
async function importReleaseCommand(config: Config, args: string[]): Promise<void> {
  const [dir, ...extra] = args;
  if (dir === undefined || extra.length > 0) {
    process.stderr.write("usage: fleetback-server import-release <release dir>\n");
    process.exit(EXIT_CONFIG);
  }
  const log = createLogger("warn");
  try {
    await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
    // The release named on the command line is the one to import; FLEETBACK_RELEASE_DIR is the server's.
    const { agentBundles } = await openAgentStore(
      { ...config, releaseDir: undefined },
      { log, clock: systemClock },
    );
    const imported = await importRelease(agentBundles, resolve(dir));
    for (const artefact of imported) {
      process.stdout.write(
        `${artefact.added ? "imported" : "already stored"} agent ${artefact.version} ${artefact.artefact} sha256 ${artefact.sha256}\n`,
      );
    }
    process.stdout.write(`agent store: ${agentBundles.dir}\n`);
  } catch (err) {
    if (err instanceof ReleaseImportError || err instanceof StartupError) {
      process.stderr.write(`fleetback: import-release: ${err.message}\n`);
    } else {
      log.fatal({ err }, "import-release failed");
      process.stderr.write("fleetback: import-release: unexpected error (see above)\n");
    }
    process.exit(EXIT_STARTUP);
  }
}

void main();

#!/usr/bin/env node
/**
 * @module cli
 * The `fleetback-agent` executable and composition root: the real process goes in, an exit
 * status comes out.
 */
import { createProcessCliDeps } from "./cli/cli-deps.js";
import { runCli } from "./cli/run-cli.js";

process.exitCode = await runCli(process.argv.slice(2), createProcessCliDeps());

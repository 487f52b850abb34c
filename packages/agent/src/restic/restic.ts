/**
 * @module restic/restic
 * The one place where repository credentials meet a restic process. It builds argv (global flags
 * before the subcommand, never a secret), the clean environment carrying the credentials, and
 * scrubs every output line before handing it on, so callers only ever see safe text.
 */

import { join } from "node:path";
import { createScrubber, mergeUrlCredentials, redactUrl } from "@fleetback/crypto";
import type { Repository } from "@fleetback/protocol";
import { stripTerminalCodes } from "@fleetback/protocol";
import { buildToolEnvironment, neutralEnvironment } from "./environment.js";
import type { ProcessResult, ProcessSpec, ResticRunner } from "./runner.js";

/** Effective caps of one invocation in KiB/s; null is "no cap". */
export interface BandwidthCaps {
  up: number | null;
  down: number | null;
}

/**
 * One restic invocation; the process options pass through to the runner as they are. `rawStdout`
 * is raw and unscrubbed, so only for output that is file data (`restic dump`), never for text that
 * could carry the credentials.
 */
export interface ResticRequest
  extends Pick<
    ProcessSpec,
    "onLine" | "rawStdout" | "signal" | "timeoutMs" | "maxLineLength" | "restoreOrder"
  > {
  subcommand: string;
  args?: readonly string[];
  /** Absent for invocations that open no repository (`version`). */
  repository?: Repository;
  /**
   * The source repository of `copy` and `init --copy-chunker-params` (RESTIC_FROM_REPOSITORY and
   * RESTIC_FROM_PASSWORD, merged and scrubbed like `repository`); only with a `repository`.
   */
  fromRepository?: Repository;
  caps?: BandwidthCaps;
  /** Adds the global `--json`; the caller checks that this subcommand and version support it. */
  json?: boolean;
}

export type ResticResult = ProcessResult | { kind: "invalid_credentials"; message: string };

export interface Restic {
  readonly command: string;
  run(request: ResticRequest): Promise<ResticResult>;
}

export interface ResticOptions {
  runner: ResticRunner;
  /** Binary path or name looked up on PATH. */
  command: string;
  stateDir: string;
  /** The agent's own environment; repository and provider variables are dropped from it. */
  parentEnv: NodeJS.ProcessEnv;
}

export function cacheDirOf(stateDir: string): string {
  return join(stateDir, "cache");
}

/** Global flags go before the subcommand: restic accepts them there on every version. */
export function buildArgs(request: ResticRequest, cacheDir: string): string[] {
  const args = ["--cache-dir", cacheDir];
  if (request.caps?.up != null) {
    args.push("--limit-upload", String(request.caps.up));
  }
  if (request.caps?.down != null) {
    args.push("--limit-download", String(request.caps.down));
  }
  if (request.json) {
    args.push("--json");
  }
  args.push(request.subcommand, ...(request.args ?? []));
  return args;
}

/**
 * The record is {url, username?, password, login_password?}, and `password` is the REPOSITORY
 * password (`config.update.repository` in packages/protocol/PROTOCOL.md). The username and the
 * login password are merged into the URL (as user:login@) only when the tool process is started.
 * So for rest:/s3: URLs with a host part, the username and `login_password` go into the URL (HTTP
 * basic auth for rest-server), and `password` is RESTIC_PASSWORD, the key that opens the
 * repository. Without `login_password` (servers and slots before protocol 11) the repository
 * password is the login too, so a repository set up that way keeps working. Other URL
 * forms come back from mergeUrlCredentials unchanged. Without a username there is no HTTP login to
 * make, so nothing is merged (an empty user with the repository password as basic auth would only
 * leak it to the repository server). The merged string lives only in one call and the child's
 * environment, never in argv or a log. Undefined: the credentials cannot be put into the URL.
 */
function mergedUrl(repository: Repository): string | undefined {
  try {
    return repository.username
      ? mergeUrlCredentials(
          repository.url,
          repository.username,
          repository.login_password ?? repository.password,
        )
      : repository.url;
  } catch {
    return undefined;
  }
}

export function createRestic(options: ResticOptions): Restic {
  const cacheDir = cacheDirOf(options.stateDir);
  return {
    command: options.command,
    async run(request) {
      const repository = request.repository;
      let env: NodeJS.ProcessEnv;
      let secrets: (string | undefined)[] = [];
      if (repository === undefined) {
        env = neutralEnvironment(options.parentEnv);
      } else {
        const merged = mergedUrl(repository);
        const from = request.fromRepository;
        const mergedFrom = from === undefined ? undefined : mergedUrl(from);
        if (merged === undefined || (from !== undefined && mergedFrom === undefined)) {
          return {
            kind: "invalid_credentials",
            message: `the ${merged === undefined ? "repository" : "source repository"} credentials cannot be put into a URL`,
          };
        }
        env = buildToolEnvironment({
          parent: options.parentEnv,
          repository: merged,
          password: repository.password,
          ...(from === undefined || mergedFrom === undefined
            ? {}
            : { from: { repository: mergedFrom, password: from.password } }),
          cacheDir,
        });
        // A merged URL that differs from the stored one carries credentials; a plain local path
        // does not, and scrubbing it would only hide the repository location from the log. The
        // user name is no secret (redactUrl hides a URL's userinfo anyway), and scrubbing it
        // mangled every path that contains it: a restore of such a browsed path matched nothing.
        secrets = [repository.password, merged === repository.url ? undefined : merged];
        if (from !== undefined) {
          secrets.push(from.password, mergedFrom === from.url ? undefined : mergedFrom);
        }
        secrets.push(repository.login_password, from?.login_password);
      }
      const scrub = createScrubber(secrets);
      return options.runner.run({
        command: options.command,
        args: buildArgs(request, cacheDir),
        env,
        // Terminal codes go first, so that a secret split by one is still found by the scrubber.
        onLine: (line) =>
          request.onLine({ stream: line.stream, text: redactUrl(scrub(stripTerminalCodes(line.text))) }),
        ...(request.rawStdout === undefined ? {} : { rawStdout: request.rawStdout }),
        signal: request.signal,
        timeoutMs: request.timeoutMs,
        maxLineLength: request.maxLineLength,
        ...(request.restoreOrder === undefined ? {} : { restoreOrder: request.restoreOrder }),
      });
    },
  };
}

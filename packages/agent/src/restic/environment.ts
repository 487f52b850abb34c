/**
 * @module restic/environment
 * Builds the environment of a restic child process. The agent's own environment may carry
 * RESTIC_* or cloud variables from the host; they are dropped so that only what the server
 * pushed reaches the tool. Credentials travel here, never in argv.
 */
import { PROGRESS_MIN_INTERVAL_MS } from "@fleetback/protocol";

/** Prefixes of variables that would change which repository restic opens or how it authenticates. */
export const DROPPED_PREFIXES = [
  "RESTIC_",
  "AWS_",
  "B2_",
  "AZURE_",
  "GOOGLE_",
  "GCS_",
  "OS_",
  "ST_",
  "RCLONE_",
  "SWIFT_",
  "SFTP_",
] as const;

/** Exact names that are repository or provider configuration without a common prefix. */
const DROPPED_NAMES = new Set(["GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_PROJECT_ID", "SSH_AUTH_SOCK"]);

export function isDroppedVariable(name: string): boolean {
  const upper = name.toUpperCase();
  return DROPPED_NAMES.has(upper) || DROPPED_PREFIXES.some((prefix) => upper.startsWith(prefix));
}

export interface ToolEnvironmentInput {
  /** The agent's own environment; only neutral variables (PATH, HOME, locale, proxies, TMPDIR) survive. */
  parent: NodeJS.ProcessEnv;
  /** Repository string with credentials already merged; it goes into RESTIC_REPOSITORY only. */
  repository: string;
  password: string;
  /**
   * The source repository of `copy` and `init --copy-chunker-params`, merged the same way; it goes
   * into RESTIC_FROM_REPOSITORY and RESTIC_FROM_PASSWORD (read by restic 0.14 and 0.18 alike).
   * Absent: no RESTIC_FROM_* at all, since the parent's were dropped with every RESTIC_*.
   */
  from?: { repository: string; password: string };
  /** restic's cache directory, under the agent's state dir. */
  cacheDir: string;
}

export function buildToolEnvironment(input: ToolEnvironmentInput): NodeJS.ProcessEnv {
  const env = neutralEnvironment(input.parent);
  env.RESTIC_REPOSITORY = input.repository;
  env.RESTIC_PASSWORD = input.password;
  if (input.from !== undefined) {
    env.RESTIC_FROM_REPOSITORY = input.from.repository;
    env.RESTIC_FROM_PASSWORD = input.from.password;
  }
  env.RESTIC_CACHE_DIR = input.cacheDir;
  // restic asks on a terminal when it can; the agent never has one to answer. Its status lines
  // come as often as the agent may send progress: more would be parsed only to be dropped.
  env.RESTIC_PROGRESS_FPS = env.RESTIC_PROGRESS_FPS ?? String(1_000 / PROGRESS_MIN_INTERVAL_MS);
  return env;
}

/**
 * The agent's environment without repository or provider variables: for invocations that open no
 * repository (`restic version`) and as the base of every tool environment.
 */
export function neutralEnvironment(parent: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && !isDroppedVariable(name)) {
      env[name] = value;
    }
  }
  return env;
}

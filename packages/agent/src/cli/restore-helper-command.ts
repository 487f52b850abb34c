/**
 * @module cli/restore-helper-command
 * `fleetback-agent restore-helper`: the restore helper (restore-helper/helper-server.ts) that the
 * installer's `fleetback-agent-restore.socket` starts on demand. With socket activation
 * (LISTEN_FDS=1) it serves the socket systemd passes as fd 3 and exits after a quiet minute;
 * otherwise it listens on `--socket` (default /run/fleetback-agent-restore.sock, 0600) until
 * SIGTERM. It never reads the agent's token or config file: only their location, to keep
 * restores out of them.
 */
import { chmod, rm } from "node:fs/promises";
import { parsePublicKey } from "@fleetback/crypto";
import { type AgentPaths, installDirOf } from "../config/paths.js";
import { createJsonLogger, isLogLevel } from "../log/logger.js";
import { DEFAULT_RESTORE_SOCKET } from "../restore-helper/helper-runner.js";
import { createRestoreHelper } from "../restore-helper/helper-server.js";
import { createOrderLedger } from "../restore-helper/order-ledger.js";
import type { CliDeps } from "./cli-deps.js";
import { EXIT } from "./exit-codes.js";

/** Where the helper keeps used orders and staged restores when systemd names no StateDirectory. */
export const HELPER_STATE_DIR = "/var/lib/fleetback-agent-restore";

/** systemd starts the helper again on the next connection, so an idle one need not wait around. */
export const HELPER_IDLE_MS = 60_000;
const SD_LISTEN_FDS_START = 3;

export async function restoreHelperCommand(
  deps: CliDeps,
  paths: AgentPaths,
  socketFlag: string | undefined,
): Promise<number> {
  const level = deps.env.FLEETBACK_AGENT_LOG_LEVEL ?? "info";
  const logger = createJsonLogger({
    write: deps.logWrite,
    level: isLogLevel(level) ? level : "info",
    clock: deps.clock,
  });
  const activated =
    deps.env.LISTEN_FDS === "1" &&
    (deps.env.LISTEN_PID === undefined || deps.env.LISTEN_PID === String(process.pid));
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const stateDir = deps.env.STATE_DIRECTORY?.split(":")[0] || HELPER_STATE_DIR;
  const pinned = deps.env.FLEETBACK_RESTORE_ORDER_KEY;
  const parsedKey = pinned === undefined || pinned === "" ? undefined : parsePublicKey(pinned);
  if (parsedKey !== undefined && !parsedKey.ok) {
    logger.error(
      "restore helper: FLEETBACK_RESTORE_ORDER_KEY is no Ed25519 public key; every restore is refused",
      {
        reason: parsedKey.reason,
      },
    );
  } else if (parsedKey === undefined) {
    logger.warn(
      "restore helper: no restore-order key is pinned; every restore is refused until the installer runs again",
    );
  }
  const helper = createRestoreHelper({
    runner: deps.runner,
    restic: paths.restic,
    env: deps.env,
    cacheDir: deps.env.CACHE_DIRECTORY?.split(":")[0] || undefined,
    protectedDirs: [paths.configDir, paths.stateDir, installDirOf(deps.env, process.argv, process.execPath)],
    orderKey: parsedKey?.ok ? parsedKey.key : undefined,
    ledger: createOrderLedger(stateDir),
    stateDir,
    now: () => deps.clock.now(),
    idleMs: activated ? HELPER_IDLE_MS : undefined,
    onIdle: () => stop(),
    log: (message, fields) => logger.info(`restore helper: ${message}`, fields as never),
  });
  const socketPath = socketFlag ?? deps.env.FLEETBACK_RESTORE_SOCKET ?? DEFAULT_RESTORE_SOCKET;
  await new Promise<void>((resolve, reject) => {
    helper.server.once("error", reject);
    if (activated) {
      helper.server.listen({ fd: SD_LISTEN_FDS_START }, () => resolve());
      return;
    }
    void rm(socketPath, { force: true }).then(() =>
      helper.server.listen(socketPath, () => {
        chmod(socketPath, 0o600).then(() => resolve(), reject);
      }),
    );
  });
  logger.info("restore helper listening", { socket: activated ? "fd 3 (socket activation)" : socketPath });
  const removeSignalHandler = deps.onShutdownSignal(() => stop());
  try {
    await stopped;
  } finally {
    removeSignalHandler();
    await helper.close();
  }
  return EXIT.ok;
}

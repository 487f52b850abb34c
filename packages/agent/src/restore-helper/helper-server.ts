/**
 * @module restore-helper/helper-server
 * The restore helper: a small root process, started by systemd through a root-only socket
 * (`fleetback-agent-restore.socket`), that runs `restic restore` for the confined agent. The agent's
 * unit keeps `ProtectSystem=strict`; only this process may write outside the agent's directories,
 * and only through a restore the request shape allows (helper-request.ts), with restic's
 * credentials going from the socket straight into restic's environment.
 *
 * A request runs only with an order the server signed (order-check.ts), once (order-ledger.ts):
 * a compromised agent can ask for a restore and nothing more, and only one an operator ordered.
 * A restore to a new directory goes through a staging directory of the helper's own, so that
 * nothing planted in the target while restic runs can redirect it (staged-restore.ts).
 *
 * One request per connection. The connection closing (the agent cancelled the job or died) ends
 * restic: SIGINT to its process group (so restic removes its lock), then SIGTERM and SIGKILL
 * through the grace period. With socket activation the helper exits after a quiet minute and
 * systemd starts it again on the next connection.
 */

import { createServer, type Server, type Socket } from "node:net";
import { neutralEnvironment } from "../restic/environment.js";
import type { ResticRunner } from "../restic/runner.js";
import { parseToolVersion, type ToolVersion } from "../restic/version.js";
import { type CancelTimer, systemTimers, type Timers } from "../time/timers.js";
import { planRestore, protectedHit, writtenPaths } from "./helper-request.js";
import {
  encodeFrame,
  HELPER_ENV_NAMES,
  type HelperFrame,
  MAX_FRAME_LINE,
  MAX_REQUEST_BYTES,
  parseRequest,
} from "./helper-wire.js";
import { checkOrder } from "./order-check.js";
import type { OrderLedger } from "./order-ledger.js";
import { placeRestore } from "./staged-restore.js";

export interface RestoreHelperOptions {
  runner: ResticRunner;
  /** restic binary: FLEETBACK_RESTIC or `restic` on PATH, as the agent finds it. */
  restic: string;
  /** The helper's own environment (PATH, HOME, locale, proxies); restic's comes from it plus the request. */
  env: NodeJS.ProcessEnv;
  /** restic's cache for restores (systemd's CACHE_DIRECTORY); undefined runs restic with --no-cache. */
  cacheDir: string | undefined;
  /** The agent's config, state and install directories: no restore lands in or over them. */
  protectedDirs: readonly string[];
  /** The server's restore-order key the unit pins; undefined: every restore is refused. */
  orderKey: Uint8Array | undefined;
  /** Used orders and the pinned host (the helper's state directory). */
  ledger: OrderLedger;
  /** The helper's state directory: staged restores for restic before 0.16 go below it. */
  stateDir: string;
  now: () => Date;
  /** Exit after this long without a connection (socket activation); undefined: run until closed. */
  idleMs?: number;
  onIdle?: () => void;
  /** Runs the idle exit; the system port unless a test drives it. */
  timers?: Timers;
  /** One line per request for the journal: what was restored where, never a credential. */
  log: (message: string, fields?: Record<string, unknown>) => void;
}

export interface RestoreHelper {
  readonly server: Server;
  /** Resolves when the server stops accepting and every running restore ended. */
  close(): Promise<void>;
}

export function createRestoreHelper(options: RestoreHelperOptions): RestoreHelper {
  const running = new Set<Promise<void>>();
  const timers = options.timers ?? systemTimers;
  let cancelIdle: CancelTimer = () => {};
  const armIdle = () => {
    if (options.idleMs === undefined || running.size > 0) {
      return;
    }
    cancelIdle();
    cancelIdle = timers.after(options.idleMs, () => options.onIdle?.(), { unref: true });
  };
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    cancelIdle();
    const done = serve(socket, options).finally(() => {
      running.delete(done);
      armIdle();
    });
    running.add(done);
  });
  server.on("listening", armIdle);
  return {
    server,
    async close() {
      cancelIdle();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all(running);
    },
  };
}

async function serve(socket: Socket, options: RestoreHelperOptions): Promise<void> {
  const send = (frame: HelperFrame) => {
    if (!socket.destroyed && socket.writable) {
      socket.write(encodeFrame(frame));
    }
  };
  const finish = (frame: HelperFrame) => {
    send(frame);
    socket.end();
  };
  socket.on("error", () => socket.destroy());
  const line = await readRequestLine(socket);
  if (!line.ok) {
    finish({ t: "refused", message: line.error });
    return;
  }
  const parsed = parseRequest(line.text);
  if (!parsed.ok) {
    finish({ t: "refused", message: parsed.error });
    return;
  }
  const { request } = parsed;
  const planned = planRestore(request.args, options.cacheDir);
  if (!planned.ok) {
    options.log("refused a request", { reason: planned.error });
    finish({ t: "refused", message: planned.error });
    return;
  }
  const { plan } = planned;
  const hit = protectedHit(writtenPaths(plan), options.protectedDirs);
  if (hit !== undefined) {
    const message = `a restore may not write to ${hit.path}: it is in or over the agent's own directory ${hit.dir}`;
    options.log("refused a restore", { target: plan.target, reason: message });
    finish({ t: "refused", message });
    return;
  }
  const checked = checkOrder({
    order: request.order,
    key: options.orderKey,
    now: options.now(),
    plan,
    repository: request.env.RESTIC_REPOSITORY,
    home: options.env.HOME,
  });
  if (!checked.ok) {
    options.log("refused a request", { target: plan.target, reason: checked.error });
    finish({ t: "refused", message: checked.error });
    return;
  }
  const { order } = checked;
  const claimed = await options.ledger.claim(order, options.now());
  if (!claimed.ok) {
    options.log("refused a request", { job_id: order.job_id, reason: claimed.error });
    finish({ t: "refused", message: claimed.error });
    return;
  }
  // The agent checks this too, but it sees a private /tmp and may not see what this process sees.
  const placed = await placeRestore({
    stateDir: options.stateDir,
    jobId: order.job_id,
    plan,
    version: await resticVersion(options),
  });
  if (!placed.ok) {
    await options.ledger.release(order.job_id);
    options.log("refused a restore", { target: plan.target, reason: placed.error });
    finish({ t: "refused", message: placed.error });
    return;
  }
  const { staging } = placed;
  const env = neutralEnvironment(options.env);
  for (const name of HELPER_ENV_NAMES) {
    const value = request.env[name];
    if (value !== undefined) {
      env[name] = value;
    }
  }
  const abort = new AbortController();
  socket.on("close", () => abort.abort());
  socket.on("end", () => abort.abort());
  options.log("restoring", {
    job_id: order.job_id,
    snapshot: plan.snapshot,
    target: plan.target,
    paths: plan.includes.length,
    ...(staging === undefined ? {} : { staged: staging.dir }),
  });
  const result = await options.runner.run({
    command: options.restic,
    args: staging?.args ?? plan.args,
    env,
    signal: abort.signal,
    maxLineLength: request.max_line_length ?? MAX_FRAME_LINE,
    onLine: (out) => {
      const text = staging === undefined ? out.text : staging.mapLine(out.text);
      send({ t: "line", s: out.stream, x: text.slice(0, MAX_FRAME_LINE + 64) });
    },
  });
  if (result.kind !== "exited" || result.exitCode !== 0) {
    // A failed run may run again (the agent's unlock-and-retry) until the order expires.
    await options.ledger.release(order.job_id);
  }
  if (result.kind === "spawn_failed") {
    finish({
      t: "refused",
      message: `cannot run ${options.restic}: ${result.message}`,
      missing: result.missing,
    });
    return;
  }
  let exitCode = result.exitCode;
  if (staging !== undefined && exitCode === 0) {
    const moved = await staging.finish();
    if (moved !== undefined) {
      send({ t: "line", s: "stderr", x: `Fatal: ${moved}` });
      exitCode = 1;
    }
  }
  options.log("restore ended", {
    job_id: order.job_id,
    snapshot: plan.snapshot,
    exit_code: exitCode,
    cancelled: result.cancelled,
  });
  finish({ t: "exit", code: exitCode, signal: result.signal });
}

/** `restic version` of the helper's restic; undefined when it cannot be read. */
async function resticVersion(options: RestoreHelperOptions): Promise<ToolVersion | undefined> {
  let stdout = "";
  const result = await options.runner.run({
    command: options.restic,
    args: ["version"],
    env: neutralEnvironment(options.env),
    timeoutMs: 30_000,
    onLine: (line) => {
      if (line.stream === "stdout") {
        stdout += `${line.text}\n`;
      }
    },
  });
  return result.kind === "exited" && result.exitCode === 0 ? parseToolVersion(stdout) : undefined;
}

function readRequestLine(socket: Socket): Promise<{ ok: true; text: string } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("close", onEnd);
    };
    const onData = (chunk: Buffer) => {
      const newline = chunk.indexOf(0x0a);
      const part = newline === -1 ? chunk : chunk.subarray(0, newline);
      chunks.push(part);
      size += part.length;
      if (size > MAX_REQUEST_BYTES) {
        cleanup();
        resolve({ ok: false, error: `the request is larger than ${MAX_REQUEST_BYTES} bytes` });
      } else if (newline !== -1) {
        cleanup();
        resolve({ ok: true, text: Buffer.concat(chunks).toString("utf8") });
      }
    };
    const onEnd = () => {
      cleanup();
      resolve({ ok: false, error: "the connection ended before a whole request" });
    };
    socket.on("data", onData);
    socket.on("end", onEnd);
    socket.on("close", onEnd);
  });
}

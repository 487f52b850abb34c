/**
 * @module dump/dump-streamer
 * Answers `dump.request` (protocol 7): one file, or one folder as a tar or zip archive, of a
 * snapshot, streamed from `restic dump` to the server in numbered `dump.chunk` frames and closed by
 * one `dump.end`. restic runs with the repository's credentials in its environment (restic.ts),
 * never in argv. Its stdout is read raw and cut into chunks of DUMP_CHUNK_MAX_BYTES; at most
 * DUMP_WINDOW_CHUNKS chunks go out ahead of the server's `dump.ack`, and stdout is paused
 * meanwhile, so restic waits on its pipe rather than the agent buffering a whole download.
 * restic is stopped (its process group killed) on `dump.cancel`, when the output passes
 * `max_bytes` (no byte past it is sent), when a chunk cannot be sent (the connection is gone),
 * when no ack comes for `ackTimeoutMs`, and when the agent stops.
 * The agent's own directories are never downloaded (issue 33): a path inside one is refused, and
 * so is a folder above one when the snapshot holds it (one `restic ls` first, held-agent-dirs.ts;
 * a snapshot from before agents excluded them does), naming it so the operator picks around it.
 */

import {
  DUMP_CHUNK_MAX_BYTES,
  DUMP_WINDOW_CHUNKS,
  type DumpAck,
  type DumpCancel,
  type DumpEndStatus,
  type DumpRequest,
  type PayloadOf,
  type Repository,
  renderStderrLine,
} from "@fleetback/protocol";
import type { Logger } from "../log/logger.js";
import type { CredentialStore } from "../restic/credential-store.js";
import { createErrorCollector } from "../restic/error-collector.js";
import type { Restic } from "../restic/restic.js";
import { agentDirForms, meetAgentDirs } from "../restore-helper/agent-dirs.js";
import { type CancelTimer, systemTimers, type Timers } from "../time/timers.js";
import { findHeldAgentDirs } from "../tree/held-agent-dirs.js";

/** Downloads one agent runs at once; a further request ends `failed` at once. */
export const DUMP_MAX_CONCURRENT = 4;
/** A download whose server stops acknowledging for this long is abandoned (the server is gone). */
export const DUMP_ACK_TIMEOUT_MS = 120_000;

export type DumpSend = <K extends "dump.chunk" | "dump.end">(type: K, payload: PayloadOf<K>) => boolean;

export interface DumpStreamerOptions {
  restic: Restic;
  credentials: CredentialStore;
  /** The agent's config, state and install directories: never downloaded. */
  agentDirs: readonly string[];
  log: Logger;
  /** Sends one frame now; false when there is no live connection (the download is then stopped). */
  send: DumpSend;
  maxConcurrent?: number;
  ackTimeoutMs?: number;
  chunkBytes?: number;
  /** Runs the acknowledgement deadline; the system port unless a test drives it. */
  timers?: Timers;
}

export interface DumpStreamer {
  /** Starts a download; resolves when its `dump.end` has been sent. */
  start(request: DumpRequest): Promise<void>;
  ack(payload: DumpAck): void;
  cancel(payload: DumpCancel): void;
  /** Stops every download (the connection they belong to is gone, or the agent stops). */
  cancelAll(): Promise<void>;
  readonly active: number;
}

/** Why a path is refused before restic runs, or undefined. `..` is refused, not resolved. */
export function dumpPathProblem(path: string): string | undefined {
  if (!path.startsWith("/")) {
    return `path ${JSON.stringify(path)} is not absolute`;
  }
  if (path.includes("\u0000")) {
    return "path contains a NUL character";
  }
  if (path.split("/").some((part) => part === "..")) {
    return `path ${JSON.stringify(path)} contains "..": name the file or folder directly`;
  }
  return undefined;
}

/** `/a//b/./c/` → `/a/b/c`; `/` stays `/`. */
function cleanPath(path: string): string {
  const parts = path.split("/").filter((part) => part !== "" && part !== ".");
  return `/${parts.join("/")}`;
}

/** Why `path` of the snapshot may not be downloaded for holding the agent's directories, or undefined. */
async function agentDirRefusal(
  options: DumpStreamerOptions,
  repository: Repository,
  request: DumpRequest,
  path: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  const meeting = meetAgentDirs(path, agentDirForms(options.agentDirs));
  if (meeting.within !== undefined) {
    return `${path} is the agent's own directory ${meeting.within} or lies inside it; its files are never downloaded`;
  }
  if (meeting.below.length === 0) {
    return undefined;
  }
  const found = await findHeldAgentDirs({
    restic: options.restic,
    repository,
    caps: options.credentials.hostCaps(),
    snapshotId: request.snapshot_id,
    paths: [path],
    dirs: meeting.below,
    signal,
  });
  if (!found.ok) {
    return found.error;
  }
  return found.held.length === 0
    ? undefined
    : `${path} holds the agent's own directory ${found.held.join(", ")} in this snapshot, whose files are never downloaded; pick the paths around it`;
}

interface Download {
  stop(status: "cancelled" | "failed", error: string): void;
  ack(seq: number): void;
  done: Promise<void>;
}

export function createDumpStreamer(options: DumpStreamerOptions): DumpStreamer {
  const { restic, credentials, log, send } = options;
  const maxConcurrent = options.maxConcurrent ?? DUMP_MAX_CONCURRENT;
  const ackTimeoutMs = options.ackTimeoutMs ?? DUMP_ACK_TIMEOUT_MS;
  const timers = options.timers ?? systemTimers;
  const chunkBytes = Math.min(options.chunkBytes ?? DUMP_CHUNK_MAX_BYTES, DUMP_CHUNK_MAX_BYTES);
  const downloads = new Map<string, Download>();

  const end = (requestId: string, status: DumpEndStatus, bytes: number, error?: string) => {
    send("dump.end", {
      request_id: requestId,
      status,
      bytes,
      ...(error === undefined ? {} : { error }),
    });
  };

  function run(request: DumpRequest): Download {
    const { request_id: requestId, max_bytes: maxBytes } = request;
    const abort = new AbortController();
    const errors = createErrorCollector();
    let stdout: NodeJS.ReadableStream | undefined;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const queue: Buffer[] = [];
    let nextSeq = 0;
    let acked = -1;
    let sentBytes = 0;
    let readBytes = 0;
    let stopped: { status: DumpEndStatus; error: string } | undefined;
    let cancelAckTimer: CancelTimer = () => {};
    let drained: (() => void) | undefined;

    const stop = (status: DumpEndStatus, error: string) => {
      if (stopped !== undefined) {
        return;
      }
      stopped = { status, error };
      queue.length = 0;
      pending = [];
      cancelAckTimer();
      abort.abort();
      // A paused pipe would keep restic blocked on its write until the kill lands.
      stdout?.resume();
      drained?.();
    };

    const armAckTimer = () => {
      cancelAckTimer();
      cancelAckTimer = timers.after(ackTimeoutMs, () =>
        stop("failed", `the server acknowledged nothing for ${Math.round(ackTimeoutMs / 1000)} s`),
      );
    };

    // Sends what the window allows; pauses restic's output while chunks wait.
    const pump = () => {
      while (stopped === undefined && queue.length > 0 && nextSeq <= acked + DUMP_WINDOW_CHUNKS) {
        const data = queue.shift() as Buffer;
        const seq = nextSeq++;
        if (!send("dump.chunk", { request_id: requestId, seq, data: data.toString("base64") })) {
          stop("failed", "the connection to the server closed during the download");
          return;
        }
        sentBytes += data.length;
        armAckTimer();
      }
      if (queue.length === 0) {
        stdout?.resume();
        drained?.();
      } else {
        stdout?.pause();
      }
    };

    const flush = (all: boolean) => {
      while (pendingBytes >= chunkBytes || (all && pendingBytes > 0)) {
        const joined = Buffer.concat(pending);
        const take = Math.min(chunkBytes, joined.length);
        queue.push(joined.subarray(0, take));
        pending = take < joined.length ? [joined.subarray(take)] : [];
        pendingBytes = joined.length - take;
      }
      pump();
    };

    const onData = (chunk: Buffer | string) => {
      if (stopped !== undefined) {
        return;
      }
      let data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      if (readBytes + data.length > maxBytes) {
        data = data.subarray(0, maxBytes - readBytes);
        readBytes = maxBytes;
        pending.push(data);
        pendingBytes += data.length;
        flush(true);
        stop("too_large", `the download is larger than its limit of ${maxBytes} bytes; restic was stopped`);
        return;
      }
      readBytes += data.length;
      pending.push(data);
      pendingBytes += data.length;
      flush(false);
    };

    const done = (async () => {
      const problem = dumpPathProblem(request.path);
      const repository = credentials.repository("repo");
      if (problem !== undefined || repository === undefined) {
        end(requestId, "failed", 0, problem ?? "no repository credentials have been pushed to this agent");
        return;
      }
      const path = cleanPath(request.path);
      const refusal = await agentDirRefusal(options, repository, request, path, abort.signal);
      if (refusal !== undefined || stopped !== undefined) {
        end(requestId, stopped?.status ?? "failed", 0, stopped?.error ?? refusal);
        return;
      }
      const archive = request.archive === undefined ? [] : ["--archive", request.archive];
      const result = await restic.run({
        subcommand: "dump",
        args: ["--no-lock", ...archive, "--", request.snapshot_id, path],
        repository,
        caps: credentials.hostCaps(),
        signal: abort.signal,
        rawStdout: (stream) => {
          stdout = stream;
          stream.on("data", onData);
        },
        onLine: (line) => errors.observe(line.stream, renderStderrLine(line.text)),
      });
      if (stopped === undefined) {
        if (result.kind === "invalid_credentials") {
          stop("failed", result.message);
        } else if (result.kind === "spawn_failed") {
          stop("failed", result.missing ? `restic not found (${restic.command})` : result.message);
        } else if (result.exitCode !== 0) {
          stop(
            "failed",
            errors.best() ?? `restic dump exited with code ${result.exitCode ?? result.signal ?? "unknown"}`,
          );
        } else {
          // Whole: the rest goes out as the window allows, then the end.
          flush(true);
          while (stopped === undefined && queue.length > 0) {
            await new Promise<void>((resolve) => {
              drained = resolve;
            });
            drained = undefined;
          }
        }
      }
      cancelAckTimer();
      if (stopped === undefined) {
        end(requestId, "succeeded", sentBytes);
        return;
      }
      const { status, error } = stopped as { status: DumpEndStatus; error: string };
      end(requestId, status, sentBytes, error);
    })();

    return {
      stop,
      ack(seq) {
        if (seq > acked && seq < nextSeq) {
          acked = seq;
          if (nextSeq - 1 === acked) {
            cancelAckTimer();
          }
          pump();
        }
      },
      done,
    };
  }

  return {
    get active() {
      return downloads.size;
    },
    async start(request) {
      if (downloads.has(request.request_id)) {
        log.warn("dump.request for a download already running; ignored", { request_id: request.request_id });
        return;
      }
      if (downloads.size >= maxConcurrent) {
        end(request.request_id, "failed", 0, `the agent already runs ${maxConcurrent} downloads; try again`);
        return;
      }
      const download = run(request);
      downloads.set(request.request_id, download);
      log.info("download started", { request_id: request.request_id, snapshot_id: request.snapshot_id });
      try {
        await download.done;
      } catch (cause) {
        log.error("download failed", { request_id: request.request_id, error: String(cause) });
        end(request.request_id, "failed", 0, "the agent could not run the download; see the agent log");
      } finally {
        downloads.delete(request.request_id);
      }
    },
    ack(payload) {
      downloads.get(payload.request_id)?.ack(payload.seq);
    },
    cancel(payload) {
      downloads.get(payload.request_id)?.stop("cancelled", "the download was cancelled");
    },
    async cancelAll() {
      const running = [...downloads.values()];
      for (const download of running) {
        download.stop("cancelled", "the agent's connection closed or it is stopping");
      }
      await Promise.all(running.map((download) => download.done.catch(() => undefined)));
    },
  };
}

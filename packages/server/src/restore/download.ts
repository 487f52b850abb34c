/**
 * @module restore/download
 * Downloads one file, or one folder as a tar or zip archive, of a host's snapshot straight to the
 * operator's browser (issue 17): the host's agent runs `restic dump` and streams its output in
 * `dump.chunk` frames (protocol 7, packages/protocol/src/dump.ts), which this module hands to the
 * HTTP response as they come. Flow control: a chunk is acknowledged (`dump.ack`) only while the
 * response's queue has room, so a slow browser holds the agent back rather than this server's
 * memory. A closed browser sends `dump.cancel`.
 *
 * Nothing pretends to succeed: a download the agent refuses before its first byte (a path it
 * cannot read, over the cap) is an error response; one that fails later (the cap passed, a gap,
 * the agent gone) aborts the response without its end, so the browser marks it failed. Every
 * download that reached the agent is audited once with its outcome and byte count. Downloads are
 * served by the replica holding the host's socket; the cap is FLEETBACK_DOWNLOAD_MAX_BYTES.
 * A path in the agent's own directories is refused here and by the agent (hosts/agent-dirs.ts);
 * a folder holding one is refused here only for an agent too old to refuse it itself.
 */

import type { Host, Snapshot } from "@fleetback/db";
import {
  type AgentEnvelope,
  DOWNLOAD_PROTOCOL_VERSION,
  type DumpArchiveFormat,
  type DumpEnd,
  type DumpEndStatus,
  systemTimers,
  type Timers,
} from "@fleetback/protocol";
import { writeAudit } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import type { ServerDeps } from "../deps.js";
import { agentDirPathProblem, agentDirsOf, olderAgentProblem } from "../hosts/agent-dirs.js";
import type { StreamHandle } from "../hub/types.js";
import { contentTypeOf, downloadFilename, downloadPathProblem } from "./download-names.js";

/** How long the agent may take to start the download (restic opens the repository first). */
export const DUMP_START_TIMEOUT_MS = 60_000;
/** A download silent this long (no chunk, no end) has failed. */
export const DUMP_IDLE_TIMEOUT_MS = 120_000;
/** Chunks the response queues before acknowledgements stop (then the agent waits). */
const RESPONSE_QUEUE_CHUNKS = 4;

/** `timers` runs the start and idle deadlines; tests pass manual ones. */
type DownloadDeps = Pick<ServerDeps, "db" | "hub" | "ids" | "clock" | "log" | "config"> & { timers?: Timers };

export interface DownloadRequest {
  host: Host;
  snapshot: Snapshot;
  path: string;
  /** For a folder: the archive restic writes (tar when absent). */
  archive: DumpArchiveFormat | undefined;
  actor: Actor;
  ip: string | undefined;
  /**
   * Drops the HTTP connection at once (the Node response's socket). A failure midway must reach
   * the browser as a broken transfer: erroring the body stream alone leaves it to
   * @hono/node-server, which answers a stream error by ending the chunked response with an
   * "Error: …" line and only then destroying the socket, so a quick client saw a complete,
   * truncated file (a CI run caught it) and reused the dying keep-alive socket. Absent in
   * in-process requests (app.request), where the errored stream is what the caller sees.
   */
  breakConnection?: () => void;
}

export type DownloadFailure = {
  ok: false;
  status: 400 | 404 | 409 | 413 | 502 | 503 | 504;
  field?: string;
  message: string;
};

export type DownloadStart =
  | {
      ok: true;
      body: ReadableStream<Uint8Array>;
      filename: string;
      contentType: string;
    }
  | DownloadFailure;

type Event =
  | { kind: "chunk"; seq: number; data: string }
  | { kind: "end"; end: DumpEnd }
  | { kind: "gone"; reason: string };

export async function startDownload(
  deps: DownloadDeps,
  request: DownloadRequest,
  signal?: AbortSignal,
): Promise<DownloadStart> {
  const { host, snapshot, path, archive } = request;
  const dirs = agentDirsOf(host);
  const problem =
    downloadPathProblem(snapshot, path) ??
    agentDirPathProblem(path, dirs) ??
    olderAgentProblem(host, path, dirs, snapshot.paths);
  if (problem !== undefined) {
    return { ok: false, status: 400, field: "path", message: problem };
  }
  if ((host.protocolVersion ?? 0) < DOWNLOAD_PROTOCOL_VERSION) {
    return {
      ok: false,
      status: 409,
      message: `The agent of ${host.name} speaks protocol ${host.protocolVersion ?? "unknown"}; downloads need protocol ${DOWNLOAD_PROTOCOL_VERSION}. Update the agent, or restore the files instead.`,
    };
  }
  const requestId = deps.ids.ulid(deps.clock.now());
  const maxBytes = deps.config.downloadMaxBytes;
  const events: Event[] = [];
  let wake: (() => void) | undefined;
  const push = (event: Event) => {
    events.push(event);
    wake?.();
  };
  const handle: StreamHandle | undefined = deps.hub.openStream(host.id, requestId, {
    frame(envelope: AgentEnvelope) {
      if (envelope.type === "dump.chunk") {
        push({ kind: "chunk", seq: envelope.payload.seq, data: envelope.payload.data });
      } else if (envelope.type === "dump.end") {
        push({ kind: "end", end: envelope.payload });
      }
    },
    closed: (reason) => push({ kind: "gone", reason }),
  });
  if (handle === undefined) {
    return {
      ok: false,
      status: 503,
      message: deps.hub.isOnline(host.id)
        ? `${host.name}'s agent is connected to another server replica; downloads are served by the replica it is connected to. Try again (a load balancer with sticky sessions helps).`
        : `${host.name} is offline; connect its agent and try again.`,
    };
  }
  const stream = handle;

  let audited = false;
  const audit = async (outcome: DumpEndStatus | "timeout", bytes: number, error?: string) => {
    if (audited) {
      return;
    }
    audited = true;
    try {
      await writeAudit(deps.db, deps, {
        actor: request.actor,
        action: "host.download",
        targetKind: "host",
        targetId: host.id,
        details: {
          snapshot_id: snapshot.id,
          path,
          archive: archive ?? null,
          max_bytes: maxBytes,
          bytes,
          outcome,
          ...(error === undefined ? {} : { error }),
        },
        ip: request.ip,
      });
    } catch (cause) {
      deps.log.error(
        { host_id: host.id, request_id: requestId, err: cause },
        "download audit entry not written",
      );
    }
  };

  if (
    !stream.send("dump.request", {
      request_id: requestId,
      snapshot_id: snapshot.id,
      path,
      ...(archive === undefined ? {} : { archive }),
      max_bytes: maxBytes,
    })
  ) {
    stream.close();
    return { ok: false, status: 503, message: `${host.name} is offline; connect its agent and try again.` };
  }

  const nextEvent = (timeoutMs: number): Promise<Event | "timeout" | "aborted"> =>
    new Promise((resolve) => {
      const take = () => {
        const event = events.shift();
        if (event !== undefined) {
          finish(event);
        }
      };
      const onAbort = () => finish("aborted");
      const cancelTimer = (deps.timers ?? systemTimers).after(timeoutMs, () => finish("timeout"));
      function finish(result: Event | "timeout" | "aborted") {
        cancelTimer();
        wake = undefined;
        signal?.removeEventListener("abort", onAbort);
        resolve(result);
      }
      if (signal?.aborted) {
        finish("aborted");
        return;
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      wake = take;
      take();
    });

  // The first frame decides between an error response and a streamed one.
  const first = await nextEvent(DUMP_START_TIMEOUT_MS);
  if (first === "aborted" || first === "timeout" || first.kind !== "chunk") {
    if (first === "aborted" || first === "timeout") {
      stream.send("dump.cancel", { request_id: requestId });
    }
    stream.close();
    if (first === "aborted") {
      await audit("cancelled", 0, "the browser went away before the download started");
      return { ok: false, status: 503, message: "The download was cancelled." };
    }
    if (first === "timeout") {
      await audit("timeout", 0, "the agent did not start the download in time");
      return {
        ok: false,
        status: 504,
        message: `The agent did not start the download within ${DUMP_START_TIMEOUT_MS / 1000} s; try again.`,
      };
    }
    if (first.kind === "gone") {
      await audit("failed", 0, first.reason);
      return { ok: false, status: 503, message: `${host.name}: ${first.reason}; try again.` };
    }
    const end = first.end;
    if (end.status !== "succeeded" || end.bytes !== 0) {
      await audit(end.status, 0, end.error);
      return end.status === "too_large"
        ? {
            ok: false,
            status: 413,
            message: `The download is larger than the limit of ${maxBytes} bytes (FLEETBACK_DOWNLOAD_MAX_BYTES); restore it instead.`,
          }
        : { ok: false, status: 502, message: `The agent could not read ${path}: ${end.error ?? end.status}` };
    }
    await audit("succeeded", 0);
    return {
      ok: true,
      body: new ReadableStream({ start: (controller) => controller.close() }),
      filename: downloadFilename(snapshot, path, archive),
      contentType: contentTypeOf(archive),
    };
  }
  events.unshift(first);

  let expectedSeq = 0;
  let bytes = 0;
  let unacked: number | undefined;
  let done = false;
  const ack = () => {
    if (unacked !== undefined) {
      stream.send("dump.ack", { request_id: requestId, seq: unacked });
      unacked = undefined;
    }
  };
  const fail = async (
    controller: ReadableStreamDefaultController<Uint8Array>,
    outcome: DumpEndStatus | "timeout",
    message: string,
  ) => {
    done = true;
    stream.close();
    deps.log.warn({ host_id: host.id, request_id: requestId, outcome, bytes }, `download failed: ${message}`);
    // The audit entry first: whoever sees the response fail can already read why.
    await audit(outcome, bytes, message);
    request.breakConnection?.();
    controller.error(new Error(message));
  };

  const pumpEvents = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    while (!done) {
      const event = await nextEvent(DUMP_IDLE_TIMEOUT_MS);
      if (done) {
        return;
      }
      if (event === "aborted") {
        done = true;
        stream.send("dump.cancel", { request_id: requestId });
        stream.close();
        await audit("cancelled", bytes, "the browser went away");
        return;
      }
      if (event === "timeout") {
        stream.send("dump.cancel", { request_id: requestId });
        await fail(controller, "timeout", `the agent sent nothing for ${DUMP_IDLE_TIMEOUT_MS / 1000} s`);
        return;
      }
      if (event.kind === "gone") {
        await fail(controller, "failed", event.reason);
        return;
      }
      if (event.kind === "end") {
        if (event.end.status === "succeeded" && event.end.bytes === bytes) {
          done = true;
          stream.close();
          await audit("succeeded", bytes);
          controller.close();
        } else {
          await fail(
            controller,
            event.end.status === "succeeded" ? "failed" : event.end.status,
            event.end.status === "too_large"
              ? `the download passed the limit of ${maxBytes} bytes`
              : (event.end.error ?? `the agent ended the download with ${bytes} of ${event.end.bytes} bytes`),
          );
        }
        return;
      }
      if (event.seq !== expectedSeq) {
        stream.send("dump.cancel", { request_id: requestId });
        await fail(controller, "failed", `chunk ${event.seq} arrived where ${expectedSeq} was due`);
        return;
      }
      expectedSeq++;
      const data = Buffer.from(event.data, "base64");
      bytes += data.length;
      if (bytes > maxBytes) {
        stream.send("dump.cancel", { request_id: requestId });
        await fail(controller, "too_large", `the download passed the limit of ${maxBytes} bytes`);
        return;
      }
      controller.enqueue(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      unacked = event.seq;
      if ((controller.desiredSize ?? 0) > 0) {
        ack();
      }
    }
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        pumpEvents(controller).catch(async (cause) => {
          if (!done) {
            await fail(controller, "failed", String(cause));
          }
        });
      },
      pull() {
        ack();
      },
      cancel() {
        if (done) {
          return;
        }
        done = true;
        push({ kind: "gone", reason: "cancelled" });
        stream.send("dump.cancel", { request_id: requestId });
        stream.close();
        void audit("cancelled", bytes, "the browser went away");
      },
    },
    new CountQueuingStrategy({ highWaterMark: RESPONSE_QUEUE_CHUNKS }),
  );
  return {
    ok: true,
    body,
    filename: downloadFilename(snapshot, path, archive),
    contentType: contentTypeOf(archive),
  };
}

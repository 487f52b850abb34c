/**
 * @module update/download
 * Fetches an update artefact with the agent's bearer token, through the same TLS pin as the
 * WebSocket (not one byte, so not the token, reaches a server whose certificate fails it), and
 * streams it to a temp file in the update dir while hashing it, so a 100 MiB executable never
 * sits in memory and a hostile or broken server cannot fill the disk past the cap.
 */
import { createHash, randomBytes } from "node:crypto";
import { open, rm } from "node:fs/promises";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { join } from "node:path";
import { ensurePrivateDir } from "../config/atomic-write.js";
import { PinnedAgent } from "../net/tls-pin.js";
import { DOWNLOAD_PREFIX } from "./update-dir.js";

export const MAX_ARTEFACT_BYTES = 256 * 1024 * 1024;
/** Between two chunks, not for the whole download: a slow link may take minutes for an executable. */
export const DOWNLOAD_IDLE_TIMEOUT_MS = 60_000;

export interface DownloadRequest {
  url: string;
  token: string;
  tlsPin?: string;
  /** The update dir: the temp file must be on the file system it is renamed within. */
  dir: string;
  maxBytes?: number;
  idleTimeoutMs?: number;
}

export type Downloaded =
  | { ok: true; path: string; sha256: string; size: number }
  | { ok: false; error: string };

export type DownloadArtefact = (request: DownloadRequest) => Promise<Downloaded>;

function get(request: DownloadRequest): Promise<IncomingMessage> {
  const url = new URL(request.url);
  const secure = url.protocol === "https:";
  const timeoutMs = request.idleTimeoutMs ?? DOWNLOAD_IDLE_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(url, {
      method: "GET",
      headers: { authorization: `Bearer ${request.token}` },
      agent: secure && request.tlsPin !== undefined ? new PinnedAgent(request.tlsPin) : undefined,
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no data for ${timeoutMs / 1000} s`)));
    req.on("response", resolve);
    req.on("error", reject);
    req.end();
  });
}

export const downloadArtefact: DownloadArtefact = async (request) => {
  const maxBytes = request.maxBytes ?? MAX_ARTEFACT_BYTES;
  const path = join(request.dir, `${DOWNLOAD_PREFIX}${randomBytes(6).toString("hex")}`);
  let response: IncomingMessage | undefined;
  try {
    response = await get(request);
    if (response.statusCode !== 200) {
      return { ok: false, error: `the server answered the download with HTTP ${response.statusCode}` };
    }
    const announced = Number(response.headers["content-length"] ?? Number.NaN);
    if (announced > maxBytes) {
      return { ok: false, error: `the artefact is ${announced} bytes, more than the ${maxBytes} allowed` };
    }
    const hash = createHash("sha256");
    let size = 0;
    await ensurePrivateDir(request.dir);
    const file = await open(path, "wx", 0o600);
    try {
      for await (const chunk of response as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) {
          throw new Error(`the artefact is more than the ${maxBytes} bytes allowed`);
        }
        hash.update(chunk);
        await file.write(chunk);
      }
      // Staging renames this file into place; its bytes must be on disk before the record names it.
      await file.sync();
    } finally {
      await file.close();
    }
    return { ok: true, path, sha256: hash.digest("hex"), size };
  } catch (cause) {
    await rm(path, { force: true });
    // Messages from node:http and node:fs name hosts and paths, never the Authorization header.
    return { ok: false, error: `download failed: ${cause instanceof Error ? cause.message : String(cause)}` };
  } finally {
    response?.destroy();
  }
};

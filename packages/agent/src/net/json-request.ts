/**
 * @module net/json-request
 * The few plain HTTP calls the agent makes (enrol, announce, claim, healthz, release key), with node:http(s)
 * rather than fetch, so that the same pinning agent as the WebSocket guards them.
 */
import http from "node:http";
import https from "node:https";
import { PinnedAgent } from "./tls-pin.js";

/** Server answers are small JSON objects; anything bigger is not our server. */
const MAX_RESPONSE_BYTES = 1024 * 1024;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

export interface JsonRequest {
  method: "GET" | "POST";
  url: string;
  body?: unknown;
  /** Normalised hex pin; only for https URLs. */
  tlsPin?: string;
  /** The agent token, for the few agent-authenticated calls (release key). */
  bearer?: string;
  timeoutMs?: number;
}

export interface JsonResponse {
  status: number;
  /** Parsed JSON, or undefined when the body was empty or not JSON. */
  body: unknown;
}

export class RequestError extends Error {
  override readonly name = "RequestError";
}

export function requestJson(request: JsonRequest): Promise<JsonResponse> {
  const url = new URL(request.url);
  const secure = url.protocol === "https:";
  const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
  const timeoutMs = request.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const options: https.RequestOptions = {
      method: request.method,
      headers: {
        accept: "application/json",
        ...(request.bearer === undefined ? {} : { authorization: `Bearer ${request.bearer}` }),
        ...(payload === undefined
          ? {}
          : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
      },
      agent: secure && request.tlsPin !== undefined ? new PinnedAgent(request.tlsPin) : undefined,
    };
    const fail = (message: string) => reject(new RequestError(`${request.method} ${url.href}: ${message}`));
    const req = (secure ? https : http).request(url, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          req.destroy(new Error("response too large"));
          return;
        }
        chunks.push(chunk);
      });
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let body: unknown;
        try {
          body = text === "" ? undefined : JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
      res.on("error", (error) => fail(error.message));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.on("error", (error) => fail(error.message));
    req.end(payload);
  });
}

/** `message` of a `{code, message}` error body, for one-line CLI errors. */
export function errorMessageOf(body: unknown): string | undefined {
  if (body !== null && typeof body === "object" && "message" in body && typeof body.message === "string") {
    return body.message;
  }
  return undefined;
}

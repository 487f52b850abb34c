/**
 * @module testing/http
 * Small helpers for driving the real app in-process: a cookie-keeping client that behaves like
 * a browser on our own origin (Origin header, CSRF token from the session), and what a page or
 * an error answer carries (the CSRF token, the message).
 */
import type { Hono } from "hono";
import type { AppEnv } from "../auth/actor.js";

export interface TestClient {
  cookie: string | undefined;
  request(path: string, init?: RequestInit): Promise<Response>;
  json(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  form(path: string, fields: Record<string, string>, headers?: Record<string, string>): Promise<Response>;
}

export function createTestClient(app: Hono<AppEnv>, baseUrl: string): TestClient {
  const origin = new URL(baseUrl).origin;
  const client: TestClient = {
    cookie: undefined,
    async request(path, init = {}) {
      const headers = new Headers(init.headers);
      if (client.cookie && !headers.has("Cookie")) {
        headers.set("Cookie", client.cookie);
      }
      const res = await app.request(path, { ...init, headers });
      const setCookie = res.headers.get("set-cookie");
      if (setCookie) {
        const pair = setCookie.split(";")[0] ?? "";
        client.cookie = pair.endsWith("=") ? undefined : pair;
      }
      return res;
    },
    json(method, path, body, headers = {}) {
      return client.request(path, {
        method,
        headers: { "Content-Type": "application/json", Origin: origin, ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    },
    form(path, fields, headers = {}) {
      return client.request(path, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: origin, ...headers },
        body: new URLSearchParams(fields).toString(),
      });
    },
  };
  return client;
}

/** The message of a JSON error answer (400, 403, 409 ...): what the caller is told was wrong. */
export async function messageOf(res: Response): Promise<string> {
  return ((await res.json()) as { message: string }).message;
}

/** Reads the CSRF token a page embeds for its forms. */
export function csrfFrom(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match?.[1]) {
    throw new Error("page has no CSRF token");
  }
  return match[1];
}

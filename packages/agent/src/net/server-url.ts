/**
 * @module net/server-url
 * The server's base URL as the operator typed it, and the endpoint URLs derived from it. A base
 * URL may carry a path prefix (a reverse proxy serving Fleetback under /backup), which is kept.
 */

export type ServerUrlResult = { ok: true; url: string } | { ok: false; message: string };

export function parseServerUrl(text: string): ServerUrlResult {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, message: `not a URL: ${JSON.stringify(text)}` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, message: `the server URL must start with http:// or https://, got ${url.protocol}` };
  }
  if (url.username || url.password) {
    return { ok: false, message: "the server URL must not contain credentials" };
  }
  if (url.search || url.hash) {
    return { ok: false, message: "the server URL must not contain a query or fragment" };
  }
  return { ok: true, url: url.href.replace(/\/+$/, "") };
}

/** `{base}/api/agents/ws` with http→ws and https→wss. */
export function agentSocketUrl(base: string): string {
  return endpointUrl(base, "/api/agents/ws").replace(/^http/, "ws");
}

export function endpointUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}

/**
 * @module support/api
 * A JSON client for the server's API with the admin's API token, as a script would use it.
 */
export interface Api {
  baseUrl: string;
  /** The bearer token, for a second client of the same admin (another replica's address). */
  token: string;
  get<T>(path: string): Promise<T>;
  send<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** Fetches any path (pages too) as the admin and records the text. */
  text(path: string): Promise<string>;
  /** Every response text seen, for secret greps. */
  seen: string[];
}

/**
 * Each call on a connection of its own: with keep-alive, undici may send on a socket the server's
 * 5 s keep-alive timer is closing just then, and on a loaded CI machine that race failed whole
 * tests with "other side closed" before the server saw the request.
 */
const CLOSE = { Connection: "close" } as const;

export function createApi(baseUrl: string, token: string): Api {
  const seen: string[] = [];
  const api: Api = {
    baseUrl,
    token,
    seen,
    async text(path: string) {
      const res = await fetch(`${baseUrl}${path}`, {
        headers: { ...CLOSE, Authorization: `Bearer ${token}` },
      });
      const text = await res.text();
      seen.push(text);
      if (!res.ok) {
        throw new Error(`GET ${path}: ${res.status} ${text}`);
      }
      return text;
    },
    async get<T>(path: string) {
      const res = await fetch(`${baseUrl}${path}`, {
        headers: { ...CLOSE, Authorization: `Bearer ${token}` },
      });
      const text = await res.text();
      seen.push(text);
      if (!res.ok) {
        throw new Error(`GET ${path}: ${res.status} ${text}`);
      }
      return JSON.parse(text) as T;
    },
    async send<T>(method: string, path: string, body?: unknown) {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { ...CLOSE, Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      seen.push(text);
      return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
    },
  };
  return api;
}

/** The first admin bootstrapAdmin creates, for tests that also sign in through the pages. */
export const ADMIN = { username: "admin", password: "e2e operator passphrase" } as const;

/** Creates the first admin through the bootstrap link and returns an API client for it. */
export async function bootstrapAdmin(baseUrl: string, output: string): Promise<Api> {
  const token = decodeURIComponent(/\/bootstrap\?token=(\S+)/.exec(output)?.[1] ?? "");
  // Connection: close as every other call here: a kept-alive socket of these two stayed in
  // undici's pool, and a test's first call seconds later went out on it just as the server's
  // keep-alive timer closed it ("other side closed").
  const created = await fetch(`${baseUrl}/api/auth/bootstrap`, {
    method: "POST",
    headers: { ...CLOSE, "Content-Type": "application/json" },
    body: JSON.stringify({ bootstrap_token: token, ...ADMIN }),
  });
  if (created.status !== 201) {
    throw new Error(`bootstrap failed: ${created.status} ${await created.text()}`);
  }
  const cookie = (created.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const minted = await fetch(`${baseUrl}/api/api-tokens`, {
    method: "POST",
    headers: { ...CLOSE, Cookie: cookie, "Content-Type": "application/json", Origin: baseUrl },
    body: JSON.stringify({ name: "e2e" }),
  });
  const mintedText = await minted.text();
  if (minted.status !== 201) {
    throw new Error(`API token creation failed: ${minted.status} ${mintedText}`);
  }
  const { token: apiToken } = JSON.parse(mintedText) as { token: string };
  return createApi(baseUrl, apiToken);
}

/**
 * @module testing/oidc-provider
 * Starts the real OpenID provider process (oidc-provider-main.mjs) on a free port and drives its
 * sign-in pages the way a browser would (cookies, the login form, the consent form) for tests that
 * run without Chromium. Accounts live in a JSON file the provider reads on every lookup, so a test
 * can move someone between groups while the provider runs.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { systemTimers } from "@fleetback/protocol";

export const OIDC_PROVIDER_MAIN = fileURLToPath(new URL("./oidc-provider-main.mjs", import.meta.url));

export type OidcAccounts = Record<string, Record<string, unknown>>;

export interface OidcProviderProcess {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Replaces every account's claims (read at the provider's next lookup). */
  setAccounts(accounts: OidcAccounts): Promise<void>;
  /** Serves `document` as the discovery document from now on; undefined serves the real one again. */
  setDiscovery(document: string | undefined): Promise<void>;
  /** What the process printed on stderr (its warnings about running a development setup, and any server error). */
  stderr(): string;
  stop(): Promise<void>;
}

export async function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startOidcProvider(options: {
  redirectUris: string[];
  accounts: OidcAccounts;
  codeTtlSeconds?: number;
  clientId?: string;
  clientSecret?: string;
}): Promise<OidcProviderProcess> {
  const dir = await mkdtemp(join(tmpdir(), "fleetback-oidc-"));
  const accountsFile = join(dir, "accounts.json");
  const discoveryFile = join(dir, "discovery.json");
  await writeFile(accountsFile, JSON.stringify(options.accounts));
  const port = await freeTcpPort();
  const clientId = options.clientId ?? "fleetback";
  const clientSecret = options.clientSecret ?? "oidc-client-secret-canary-5f1d0c";
  const config = {
    port,
    accounts_file: accountsFile,
    discovery_file: discoveryFile,
    code_ttl_seconds: options.codeTtlSeconds ?? 60,
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
  };
  const child: ChildProcess = spawn(process.execPath, [OIDC_PROVIDER_MAIN], {
    env: { ...process.env, OIDC_TEST_CONFIG: JSON.stringify(config), NODE_ENV: "test" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const issuer = await new Promise<string>((resolve, reject) => {
    let stdout = "";
    const cancelTimer = systemTimers.after(30_000, () =>
      reject(new Error(`OpenID provider did not start: ${stderr}`)),
    );
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      const match = /ready (\S+)/.exec(stdout);
      if (match?.[1]) {
        cancelTimer();
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => {
      cancelTimer();
      reject(new Error(`OpenID provider exited with ${code}: ${stderr}`));
    });
  });
  return {
    issuer,
    clientId,
    clientSecret,
    setAccounts: (accounts) => writeFile(accountsFile, JSON.stringify(accounts)),
    setDiscovery: (document) =>
      document === undefined ? rm(discoveryFile, { force: true }) : writeFile(discoveryFile, document),
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Cookies of one origin, as a browser keeps them (enough for the provider's pages). */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /expires=.*1970/i.test(a));
      if (expired || value === "") {
        this.cookies.delete(name);
      } else {
        this.cookies.set(name, value);
      }
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }
}

/**
 * Follows the provider's pages from the authorization URL, signs in as `login` with any password
 * and consents, and answers the URL the provider redirects back to (not fetched: the caller hands
 * it to the app with the app's own cookie).
 */
export async function signInAtProvider(
  authorizationUrl: string,
  login: string,
  redirectUri: string,
): Promise<URL> {
  const jar = new CookieJar();
  let url = new URL(authorizationUrl);
  let init: RequestInit = {};
  for (let step = 0; step < 12; step++) {
    const res = await fetch(url, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), Cookie: jar.header() },
    });
    jar.take(res);
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      const next = new URL(location, url);
      if (next.href.startsWith(redirectUri)) {
        return next;
      }
      url = next;
      init = {};
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) {
      throw new Error(`provider answered ${res.status}: ${html.slice(0, 500)}`);
    }
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) {
      throw new Error(`provider page without a form: ${html.slice(0, 500)}`);
    }
    const fields: Record<string, string> = html.includes('name="login"')
      ? { prompt: "login", login, password: "any password" }
      : { prompt: "consent" };
    url = new URL(action.replace(/&amp;/g, "&"), url);
    init = {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    };
  }
  throw new Error("the provider's sign-in did not come back within 12 steps");
}

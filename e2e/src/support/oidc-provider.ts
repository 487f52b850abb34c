/**
 * @module support/oidc-provider
 * Runs the real OpenID provider process (oidc-provider, see its main script) for the browser's
 * single sign-on: one client whose redirect URI is the Fleetback server's callback, and accounts
 * with claims. Its own development login page takes any password for a known login.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { oidcProviderMain } from "./paths.js";
import { freePort } from "./ports.js";

export interface OidcProvider {
  issuer: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startOidcProvider(options: {
  redirectUri: string;
  clientId: string;
  clientSecret: string;
  accounts: Record<string, Record<string, unknown>>;
}): Promise<OidcProvider> {
  const dir = await mkdtemp(join(tmpdir(), "fleetback-e2e-oidc-"));
  const accountsFile = join(dir, "accounts.json");
  await writeFile(accountsFile, JSON.stringify(options.accounts));
  const config = {
    port: await freePort(),
    accounts_file: accountsFile,
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
  };
  const child: ChildProcess = spawn(process.execPath, [oidcProviderMain], {
    env: { ...process.env, OIDC_TEST_CONFIG: JSON.stringify(config) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const issuer = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`OpenID provider not up in 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = /^ready (\S+)$/m.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`OpenID provider exited with ${code}:\n${output}`));
    });
  });
  return {
    issuer,
    output: () => output,
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

/**
 * @module auth/sso-discovery
 * The provider's metadata (its discovery document), read on first use, not at start: a provider
 * that is down must not keep the server (and its password sign-in) from starting. A document is
 * used only once it names the endpoints a sign-in needs: a proxy's error page or a half-written
 * document answered with 200 would otherwise be held until restart and fail every sign-in.
 * A failure is remembered only briefly: sign-ins answer 503 at once while it lasts (a flood of
 * clicks does not become a flood of requests to a struggling provider), then the next sign-in
 * asks again, waiting twice as long after each failure in a row, up to 5 minutes. A good
 * document is read again after an hour, and kept while a newer one cannot be had.
 */
import type * as OidcModule from "openid-client";
import { RequestError } from "../errors.js";
import type { SsoConfig } from "./sso-config.js";

type Oidc = typeof OidcModule;

export const DISCOVERY_RETRY_FIRST_MS = 5_000;
export const DISCOVERY_RETRY_MAX_MS = 5 * 60_000;
export const DISCOVERY_REFRESH_MS = 60 * 60_000;
const REQUIRED_ENDPOINTS = ["authorization_endpoint", "token_endpoint", "jwks_uri"] as const;

/** Why the document cannot be used, naming the field; undefined when it can. */
function documentProblem(configuration: OidcModule.Configuration, allowHttp: boolean): string | undefined {
  const metadata = configuration.serverMetadata() as Record<string, unknown>;
  for (const field of REQUIRED_ENDPOINTS) {
    const value = metadata[field];
    let url: URL | undefined;
    try {
      url = typeof value === "string" ? new URL(value) : undefined;
    } catch {
      url = undefined;
    }
    if (url === undefined || !(url.protocol === "https:" || (allowHttp && url.protocol === "http:"))) {
      return `its discovery document has no usable ${field}`;
    }
  }
  return undefined;
}

class UnusableDocument extends Error {}

export function createDiscovery(
  config: SsoConfig,
  loadOidc: () => Promise<Oidc>,
  options: { now: () => number; onError?: ((error: unknown) => void) | undefined },
): () => Promise<OidcModule.Configuration> {
  let good: { configuration: OidcModule.Configuration; at: number } | undefined;
  let failure: { until: number; delayMs: number; reason: string } | undefined;
  let running: Promise<OidcModule.Configuration> | undefined;

  const unavailable = (reason: string) =>
    new RequestError("unavailable", `Single sign-on is unavailable: ${reason}. Try again shortly.`);

  const discover = async (): Promise<OidcModule.Configuration> => {
    try {
      const oidc = await loadOidc();
      const configuration = await oidc.discovery(
        new URL(config.issuer),
        config.clientId,
        config.clientSecret,
        undefined,
        { execute: config.allowHttp ? [oidc.allowInsecureRequests] : [], timeout: 10 },
      );
      const problem = documentProblem(configuration, config.allowHttp);
      if (problem !== undefined) {
        throw new UnusableDocument(problem);
      }
      good = { configuration, at: options.now() };
      failure = undefined;
      return configuration;
    } catch (error) {
      const delayMs =
        failure === undefined
          ? DISCOVERY_RETRY_FIRST_MS
          : Math.min(failure.delayMs * 2, DISCOVERY_RETRY_MAX_MS);
      const reason =
        error instanceof UnusableDocument
          ? `the identity provider's answer is unusable (${error.message})`
          : "the identity provider did not answer";
      failure = { until: options.now() + delayMs, delayMs, reason };
      options.onError?.(error);
      throw error;
    }
  };

  return async () => {
    const now = options.now();
    if (good !== undefined && now - good.at < DISCOVERY_REFRESH_MS) {
      return good.configuration;
    }
    if (failure !== undefined && now < failure.until) {
      if (good !== undefined) {
        return good.configuration;
      }
      throw unavailable(failure.reason);
    }
    // One request at a time: the sign-ins arriving meanwhile share its answer.
    running ??= discover().finally(() => {
      running = undefined;
    });
    try {
      return await running;
    } catch {
      if (good !== undefined) {
        return good.configuration;
      }
      throw unavailable(failure?.reason ?? "the identity provider did not answer");
    }
  };
}

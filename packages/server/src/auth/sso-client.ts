/**
 * @module auth/sso-client
 * The OpenID Connect authorization code flow with PKCE, `state` and `nonce`, through openid-client
 * (a certified relying party). What a sign-in must remember between leaving for the provider and
 * coming back (state, nonce, PKCE verifier, where to go next) travels in a cookie sealed with the
 * server's secret key: nothing is stored, any replica can finish a sign-in another one started,
 * and the cookie binds the callback to the browser that started it (a code pasted into another
 * browser, or a callback forged into a victim's, has no cookie to match).
 */
import { openJson, sealJson } from "@fleetback/crypto";
import type * as OidcModule from "openid-client";
import { RequestError } from "../errors.js";
import { readClaim } from "./sso-access.js";
import type { SsoConfig } from "./sso-config.js";
import { createDiscovery } from "./sso-discovery.js";

export const SSO_COOKIE = "fleetback_sso";
export const SSO_CALLBACK_PATH = "/auth/sso/callback";
/** A sign-in left for the provider must come back within this. */
export const SSO_LOGIN_TTL_MS = 10 * 60 * 1000;
const COOKIE_AAD = "fleetback:sso-login";

interface PendingLogin {
  state: string;
  nonce: string;
  verifier: string;
  next: string;
  expiresAt: number;
}

export interface SsoIdentity {
  /** The issuer as the provider's metadata names it. */
  issuer: string;
  subject: string;
  /** The id token's claims, with the userinfo endpoint's when the role claim was not in it. */
  claims: Record<string, unknown>;
  next: string;
}

export interface SsoClient {
  readonly config: SsoConfig;
  /** The provider's authorization URL and the sealed cookie to set before redirecting there. */
  start(next: string): Promise<{ url: string; cookie: string }>;
  /** Completes a callback (the full URL the provider redirected to) for the browser's cookie. */
  finish(callbackUrl: URL, cookie: string | undefined): Promise<SsoIdentity>;
}

function refused(message: string): RequestError {
  return new RequestError("unauthorised", `Single sign-on failed: ${message}`);
}

/** The messages of an error and its causes (openid-client wraps the check that failed). */
function messages(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    parts.push(e.message);
  }
  return parts.join(" / ");
}

type Oidc = typeof OidcModule;
let loadingOidc: Promise<Oidc> | undefined;
/** Loaded on the first sign-in, not at start: most servers have no SSO, and idle memory counts. */
const loadOidc = (): Promise<Oidc> => {
  loadingOidc ??= import("openid-client");
  return loadingOidc;
};

/** What the provider or the checks said, without anything of the response beyond its error code. */
function describe(oidc: Oidc, error: unknown): string {
  if (error instanceof oidc.ResponseBodyError || error instanceof oidc.AuthorizationResponseError) {
    const detail = error.error_description ? ` (${error.error_description.slice(0, 200)})` : "";
    return `the provider answered ${error.error}${detail}`;
  }
  const text = messages(error);
  if (/"state"/.test(text)) {
    return "the answer's state does not match this browser's sign-in";
  }
  if (/nonce/i.test(text)) {
    return "the id token's nonce does not match this browser's sign-in";
  }
  if (/timed out|fetch failed|ECONNREFUSED/i.test(text)) {
    return "the identity provider did not answer";
  }
  return "the provider's answer could not be verified";
}

export function createSsoClient(
  config: SsoConfig,
  options: {
    /** Read at each sign-in: the public URL is final only once the server listens. */
    baseUrl: () => string;
    secretKey: Uint8Array;
    now: () => number;
    onDiscoveryError?: (error: unknown) => void;
  },
): SsoClient {
  const configuration = createDiscovery(config, loadOidc, {
    now: options.now,
    onError: options.onDiscoveryError,
  });

  const sealPending = (pending: PendingLogin): string =>
    Buffer.from(sealJson(options.secretKey, pending, COOKIE_AAD)).toString("base64url");

  const openPending = (cookie: string | undefined): PendingLogin => {
    if (cookie === undefined || cookie.length > 4096) {
      throw refused("this browser did not start a sign-in here (or its cookie was lost); start again");
    }
    const opened = openJson(options.secretKey, Buffer.from(cookie, "base64url"), COOKIE_AAD);
    const value = opened.ok ? (opened.value as Partial<PendingLogin>) : undefined;
    if (
      typeof value?.state !== "string" ||
      typeof value.nonce !== "string" ||
      typeof value.verifier !== "string" ||
      typeof value.next !== "string" ||
      typeof value.expiresAt !== "number"
    ) {
      throw refused("this browser's sign-in could not be read; start again");
    }
    if (value.expiresAt < options.now()) {
      throw refused("the sign-in took longer than 10 minutes; start again");
    }
    return value as PendingLogin;
  };

  return {
    config,
    async start(next) {
      const server = await configuration();
      const oidc = await loadOidc();
      const verifier = oidc.randomPKCECodeVerifier();
      const pending: PendingLogin = {
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
        verifier,
        next,
        expiresAt: options.now() + SSO_LOGIN_TTL_MS,
      };
      const url = oidc.buildAuthorizationUrl(server, {
        redirect_uri: `${options.baseUrl()}${SSO_CALLBACK_PATH}`,
        scope: config.scopes,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
        state: pending.state,
        nonce: pending.nonce,
      });
      return { url: url.href, cookie: sealPending(pending) };
    },
    async finish(callbackUrl, cookie) {
      const pending = openPending(cookie);
      const server = await configuration();
      const oidc = await loadOidc();
      let tokens: Awaited<ReturnType<Oidc["authorizationCodeGrant"]>>;
      try {
        tokens = await oidc.authorizationCodeGrant(server, callbackUrl, {
          pkceCodeVerifier: pending.verifier,
          expectedState: pending.state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        });
      } catch (error) {
        throw refused(describe(oidc, error));
      }
      const idClaims = tokens.claims();
      if (idClaims === undefined) {
        throw refused("the provider sent no id token");
      }
      let claims: Record<string, unknown> = { ...idClaims };
      if (config.roleClaim !== undefined && readClaim(claims, config.roleClaim) === undefined) {
        try {
          const info = await oidc.fetchUserInfo(server, tokens.access_token, idClaims.sub);
          claims = { ...info, ...idClaims };
        } catch (error) {
          throw refused(`reading the user's claims: ${describe(oidc, error)}`);
        }
      }
      return { issuer: server.serverMetadata().issuer, subject: idClaims.sub, claims, next: pending.next };
    },
  };
}

/**
 * @module routes/sso-pages
 * Single sign-on through the OpenID provider (auth/sso-*.ts): `/auth/sso` leaves for the
 * provider, `/auth/sso/callback` comes back, finds or creates the user and starts a session like
 * a password sign-in. Both answer 404 when FLEETBACK_OIDC_ISSUER is unset.
 */
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import type { AppEnv } from "../auth/actor.js";
import { signIn } from "../auth/sign-in.js";
import {
  createSsoClient,
  SSO_CALLBACK_PATH,
  SSO_COOKIE,
  SSO_LOGIN_TTL_MS,
  type SsoClient,
} from "../auth/sso-client.js";
import { ssoUser } from "../auth/sso-users.js";
import { notFound } from "../errors.js";
import { clientIp } from "../http/client-address.js";
import { safeNext } from "../http/safe-next.js";
import { readQuery } from "../http/validate.js";

export const SSO_START_PATH = "/auth/sso";

const StartQuery = Type.Object(
  { next: Type.Optional(Type.String({ maxLength: 512 })) },
  { additionalProperties: false },
);

export function ssoPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const sso = deps.config.sso;
  const client: SsoClient | undefined =
    sso === undefined
      ? undefined
      : createSsoClient(sso, {
          baseUrl: () => deps.config.baseUrl,
          secretKey: deps.keys.secret,
          now: () => deps.clock.now().getTime(),
          onDiscoveryError: (error) =>
            deps.log.warn(
              { issuer: sso.issuer, err: error instanceof Error ? error.message : String(error) },
              "single sign-on: the identity provider's discovery failed",
            ),
        });
  const enabled = (): SsoClient => {
    if (client === undefined) {
      throw notFound("Single sign-on is not configured on this server.");
    }
    return client;
  };
  const cookieOptions = () => ({
    httpOnly: true,
    // Lax: the provider's redirect back is a top-level GET navigation, which carries it.
    sameSite: "Lax" as const,
    secure: deps.config.baseUrl.startsWith("https:"),
    path: "/auth/sso",
  });

  routes.get(SSO_START_PATH, async (c) => {
    const sso = enabled();
    const query = readQuery(c, StartQuery);
    const started = await sso.start(safeNext(query.next, deps.config.baseUrl));
    setCookie(c, SSO_COOKIE, started.cookie, { ...cookieOptions(), maxAge: SSO_LOGIN_TTL_MS / 1000 });
    return c.redirect(started.url, 303);
  });

  routes.get(SSO_CALLBACK_PATH, async (c) => {
    const sso = enabled();
    const cookie = getCookie(c, SSO_COOKIE);
    // One use: a failed or finished sign-in leaves nothing to replay.
    deleteCookie(c, SSO_COOKIE, cookieOptions());
    const search = new URL(c.req.url).search;
    const identity = await sso.finish(new URL(`${deps.config.baseUrl}${SSO_CALLBACK_PATH}${search}`), cookie);
    const user = await ssoUser(deps, sso.config, identity, { ip: clientIp(c) });
    await signIn(c, deps, user, "auth.sso_login");
    deps.log.info({ user_id: user.id, role: user.role }, "single sign-on");
    return c.redirect(safeNext(identity.next, deps.config.baseUrl), 303);
  });
  return routes;
}

/**
 * A real OpenID provider process (oidc-provider, a certified implementation) for the single
 * sign-on tests of the server and e2e. Configured by one JSON in OIDC_TEST_CONFIG:
 *   { port, clients: [{ client_id, client_secret, redirect_uris }], accounts_file, code_ttl_seconds }
 * where accounts_file holds { [login]: { [claim]: value } } and is read at every lookup, so a test
 * can change someone's groups while the provider runs. With `discovery_file` set and that file
 * present, its content is served as the discovery document instead of the real one (a provider
 * misconfigured for a while).
 * Its own development sign-in pages stand in for a company's login: any password is accepted for
 * a login named in `accounts` (an unknown login is refused at the token step), then a consent page.
 * Prints `ready <issuer>` once it listens.
 */
import { existsSync, readFileSync } from "node:fs";
import Provider from "oidc-provider";

const config = JSON.parse(process.env.OIDC_TEST_CONFIG ?? "{}");
const issuer = `http://127.0.0.1:${config.port}`;
const accounts = () => JSON.parse(readFileSync(config.accounts_file, "utf8"));

const provider = new Provider(issuer, {
  clients: config.clients,
  pkce: { required: () => true },
  ttl: { AuthorizationCode: config.code_ttl_seconds ?? 60 },
  scopes: ["openid", "profile", "email", "groups"],
  claims: {
    openid: ["sub"],
    profile: ["preferred_username", "name"],
    email: ["email", "email_verified"],
    groups: ["groups"],
  },
  // The id token carries the claims the scopes grant, as most company providers configure it.
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: true } },
  cookies: { keys: ["fleetback-oidc-test-provider-cookie-key"] },
  async findAccount(_ctx, id) {
    const claims = accounts()[id];
    if (claims === undefined) {
      return undefined;
    }
    return { accountId: id, claims: async () => ({ sub: id, ...claims }) };
  },
});
provider.use(async (ctx, next) => {
  if (
    ctx.path === "/.well-known/openid-configuration" &&
    config.discovery_file &&
    existsSync(config.discovery_file)
  ) {
    ctx.type = "application/json";
    ctx.body = readFileSync(config.discovery_file, "utf8");
    return;
  }
  await next();
});
provider.on("server_error", (_ctx, error) => {
  process.stderr.write(`provider error: ${error.stack ?? error}\n`);
});

const server = provider.listen(config.port, "127.0.0.1", () => {
  process.stdout.write(`ready ${issuer}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));

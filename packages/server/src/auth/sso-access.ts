/**
 * @module auth/sso-access
 * Who the identity provider may sign in at all, before any role is looked at. A multi-tenant
 * provider (Google, Entra ID "common") vouches for anyone on the internet, so the provider's
 * word alone is not enough: FLEETBACK_OIDC_ALLOWED_DOMAINS limits sign-on to verified email
 * addresses of the company's domains, FLEETBACK_OIDC_REQUIRED_CLAIM to people carrying one
 * claim value (a group). Both are checked at every sign-in, for existing users too.
 */

/** A claim by name; a dotted name reads into nested objects (Keycloak's `realm_access.roles`). */
export function readClaim(claims: Record<string, unknown>, name: string): unknown {
  if (name in claims) {
    return claims[name];
  }
  let value: unknown = claims;
  for (const part of name.split(".")) {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      return undefined;
    }
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

export interface SsoAccessRules {
  /** Lower-case domains a verified `email` must be in; empty: any (or no) email. */
  allowedDomains: readonly string[];
  /** `claim=value`: the claim (a string, or a list of strings) must hold the value. */
  requiredClaim: { name: string; value: string } | undefined;
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const CLAIM_NAME = /^[A-Za-z0-9_.:/-]{1,128}$/;

export function parseAccessRules(env: NodeJS.ProcessEnv, errors: string[]): SsoAccessRules {
  const allowedDomains: string[] = [];
  for (const entry of (env.FLEETBACK_OIDC_ALLOWED_DOMAINS ?? "").split(",")) {
    const domain = entry.trim().toLowerCase().replace(/^@/, "");
    if (domain === "") {
      continue;
    }
    if (!DOMAIN.test(domain)) {
      errors.push(
        `FLEETBACK_OIDC_ALLOWED_DOMAINS: "${entry.trim()}" is not a domain (example: example.com,example.org)`,
      );
      continue;
    }
    allowedDomains.push(domain);
  }
  const raw = (env.FLEETBACK_OIDC_REQUIRED_CLAIM ?? "").trim();
  let requiredClaim: SsoAccessRules["requiredClaim"];
  if (raw !== "") {
    const at = raw.indexOf("=");
    const name = raw.slice(0, at).trim();
    const value = raw.slice(at + 1).trim();
    if (at <= 0 || !CLAIM_NAME.test(name) || value === "" || value.length > 256) {
      errors.push(
        `FLEETBACK_OIDC_REQUIRED_CLAIM: "${raw}" is not claim=value (examples: groups=backup-admins, hd=example.com)`,
      );
    } else {
      requiredClaim = { name, value };
    }
  }
  return { allowedDomains, requiredClaim };
}

/** Why these claims may not sign in, or undefined when they may. */
export function accessRefusal(rules: SsoAccessRules, claims: Record<string, unknown>): string | undefined {
  if (rules.allowedDomains.length > 0) {
    const email = typeof claims.email === "string" ? claims.email.toLowerCase() : undefined;
    // An unverified address is whatever the person typed at the provider: it proves nothing.
    if (email === undefined || claims.email_verified !== true) {
      return "the identity provider vouches for no verified email address";
    }
    const domain = email.slice(email.lastIndexOf("@") + 1);
    if (!rules.allowedDomains.includes(domain)) {
      return `email addresses of ${domain} may not sign in here`;
    }
  }
  if (rules.requiredClaim !== undefined) {
    const { name, value } = rules.requiredClaim;
    const held = readClaim(claims, name);
    const values = Array.isArray(held) ? held : [held];
    if (!values.some((v) => v === value)) {
      return `the identity provider does not give you the ${name} this server requires`;
    }
  }
  return undefined;
}

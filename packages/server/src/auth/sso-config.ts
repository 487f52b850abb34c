/**
 * @module auth/sso-config
 * OpenID Connect single sign-on settings, read from the environment at start with the rest of
 * config.ts. Every problem is one line naming its variable. The client secret comes from the
 * environment or from a file (FLEETBACK_OIDC_CLIENT_SECRET_FILE, read like every secret setting by
 * config-secret-file.ts); it is held in memory only and never written to the database or a log.
 */
import { USER_ROLES, type UserRole } from "@fleetback/db";
import { secretSetting } from "../config-secret-file.js";
import { parseAccessRules, type SsoAccessRules } from "./sso-access.js";

export interface SsoConfig {
  /** The provider's issuer URL as configured (discovery reads `/.well-known/openid-configuration` under it). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Space-separated, always with `openid`. */
  scopes: string;
  /** The claim whose value (a string or a list of strings) maps to a role; undefined: every user gets defaultRole. */
  roleClaim: string | undefined;
  /** Claim value → role; with several matching values the highest role wins. */
  roleMap: ReadonlyMap<string, UserRole>;
  /** The role of a user no mapping matches; null (the default) refuses them. */
  defaultRole: UserRole | null;
  /** Who may sign in at all (email domains, a required claim), before any role. */
  access: SsoAccessRules;
  /**
   * How long a single sign-on session lasts before the provider must be asked again: what bounds
   * how long someone removed at the provider keeps their way in. Set by config.ts (durations).
   */
  sessionMaxMs: number;
  /** The claim a new user's name is taken from (then `email`, then the subject). */
  usernameClaim: string;
  /** What the sign-in button calls the provider. */
  displayName: string;
  /** Plain http is accepted only for a provider on this machine (tests, a local dev provider). */
  allowHttp: boolean;
}

export const SSO_SESSION_MAX_DEFAULT_MS = 8 * 60 * 60 * 1000;

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);
const CLAIM_PATTERN = /^[A-Za-z0-9_.:/-]{1,128}$/;

function parseIssuer(value: string, errors: string[]): { issuer: string; allowHttp: boolean } | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    errors.push(
      `FLEETBACK_OIDC_ISSUER: "${value}" is not a URL (example: https://login.example.com/realms/ops)`,
    );
    return undefined;
  }
  const loopback = LOOPBACK.has(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    errors.push(
      "FLEETBACK_OIDC_ISSUER: must be an https:// URL (http:// only for a provider on this machine)",
    );
    return undefined;
  }
  if (url.username || url.password || url.search || url.hash) {
    errors.push("FLEETBACK_OIDC_ISSUER: must not contain credentials, a query or a fragment");
    return undefined;
  }
  return { issuer: value.replace(/\/+$/, ""), allowHttp: url.protocol === "http:" };
}

function parseRole(value: string, variable: string, errors: string[]): UserRole | undefined {
  if ((USER_ROLES as readonly string[]).includes(value)) {
    return value as UserRole;
  }
  errors.push(`${variable}: "${value}" is not one of ${USER_ROLES.join(", ")}`);
  return undefined;
}

/** `value=role` pairs separated by commas, e.g. `fleet-admins=admin,fleet-ops=operator`. */
function parseRoleMap(value: string, errors: string[]): Map<string, UserRole> {
  const map = new Map<string, UserRole>();
  for (const entry of value.split(",").map((part) => part.trim())) {
    if (entry === "") {
      continue;
    }
    const at = entry.lastIndexOf("=");
    const claimValue = entry.slice(0, at).trim();
    if (at <= 0 || claimValue === "") {
      errors.push(
        `FLEETBACK_OIDC_ROLE_MAP: "${entry}" is not value=role (example: fleet-admins=admin,fleet-ops=operator)`,
      );
      continue;
    }
    const role = parseRole(entry.slice(at + 1).trim(), "FLEETBACK_OIDC_ROLE_MAP", errors);
    if (role !== undefined) {
      map.set(claimValue, role);
    }
  }
  return map;
}

function readSecret(env: NodeJS.ProcessEnv, cwd: string, errors: string[]): string | undefined {
  const before = errors.length;
  const secret = secretSetting(env, "FLEETBACK_OIDC_CLIENT_SECRET", cwd, errors);
  if (secret === undefined && errors.length === before) {
    errors.push(
      "FLEETBACK_OIDC_CLIENT_SECRET: required with FLEETBACK_OIDC_ISSUER (or FLEETBACK_OIDC_CLIENT_SECRET_FILE)",
    );
  }
  return secret?.value;
}

function claimName(env: NodeJS.ProcessEnv, variable: string, fallback: string | undefined, errors: string[]) {
  const value = env[variable] || fallback;
  if (value !== undefined && !CLAIM_PATTERN.test(value)) {
    errors.push(`${variable}: "${value}" is not a claim name (examples: groups, roles, realm_access.roles)`);
  }
  return value;
}

/** Undefined when FLEETBACK_OIDC_ISSUER is unset (single sign-on off); problems go to `errors`. */
export function parseSsoConfig(env: NodeJS.ProcessEnv, cwd: string, errors: string[]): SsoConfig | undefined {
  const issuerRaw = env.FLEETBACK_OIDC_ISSUER || undefined;
  if (issuerRaw === undefined) {
    const stray = Object.keys(env).filter((name) => name.startsWith("FLEETBACK_OIDC_") && env[name]);
    if (stray.length > 0) {
      errors.push(`${stray.sort()[0]}: set FLEETBACK_OIDC_ISSUER too, or unset it`);
    }
    return undefined;
  }
  const before = errors.length;
  const issuer = parseIssuer(issuerRaw, errors);
  const clientId = env.FLEETBACK_OIDC_CLIENT_ID || undefined;
  if (clientId === undefined) {
    errors.push("FLEETBACK_OIDC_CLIENT_ID: required with FLEETBACK_OIDC_ISSUER");
  }
  const clientSecret = readSecret(env, cwd, errors);
  const scopes = (env.FLEETBACK_OIDC_SCOPES || "openid profile email").trim().split(/\s+/);
  if (!scopes.includes("openid") || scopes.some((scope) => !/^[\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(scope))) {
    errors.push(
      `FLEETBACK_OIDC_SCOPES: "${scopes.join(" ")}" must be space-separated scopes including openid`,
    );
  }
  const roleClaim = claimName(env, "FLEETBACK_OIDC_ROLE_CLAIM", undefined, errors);
  const roleMap = parseRoleMap(env.FLEETBACK_OIDC_ROLE_MAP ?? "", errors);
  if (roleMap.size > 0 && roleClaim === undefined) {
    errors.push(
      "FLEETBACK_OIDC_ROLE_MAP: set FLEETBACK_OIDC_ROLE_CLAIM too (the claim its values are read from)",
    );
  }
  // No access by default: with a multi-tenant provider a default role hands it to anyone.
  const defaultRaw = (env.FLEETBACK_OIDC_DEFAULT_ROLE || "none").trim();
  const defaultRole =
    defaultRaw === "none" ? null : (parseRole(defaultRaw, "FLEETBACK_OIDC_DEFAULT_ROLE", errors) ?? null);
  const access = parseAccessRules(env, errors);
  const usernameClaim = claimName(env, "FLEETBACK_OIDC_USERNAME_CLAIM", "preferred_username", errors) ?? "";
  const displayName = (env.FLEETBACK_OIDC_NAME || "single sign-on").trim().slice(0, 64);
  if (
    errors.length > before ||
    issuer === undefined ||
    clientId === undefined ||
    clientSecret === undefined
  ) {
    return undefined;
  }
  return {
    issuer: issuer.issuer,
    clientId,
    clientSecret,
    scopes: scopes.join(" "),
    roleClaim,
    roleMap,
    defaultRole,
    access,
    sessionMaxMs: SSO_SESSION_MAX_DEFAULT_MS,
    usernameClaim,
    displayName,
    allowHttp: issuer.allowHttp,
  };
}

/** FLEETBACK_LOCAL_LOGIN: `on` (default) or `off`; off takes effect once an enabled SSO admin exists. */
export function parseLocalLogin(env: NodeJS.ProcessEnv, sso: boolean, errors: string[]): boolean {
  const value = (env.FLEETBACK_LOCAL_LOGIN || "on").trim().toLowerCase();
  if (value !== "on" && value !== "off") {
    errors.push(`FLEETBACK_LOCAL_LOGIN: "${value}" is not on or off`);
    return true;
  }
  if (value === "off" && !sso) {
    errors.push(
      "FLEETBACK_LOCAL_LOGIN: off needs single sign-on (FLEETBACK_OIDC_ISSUER), or nobody could sign in",
    );
    return true;
  }
  return value === "on";
}

/**
 * @module config
 * Reads the server's configuration from the environment once, at start-up. Every problem is
 * collected and reported together, each naming its variable, so an operator fixes them in one go.
 * The secret settings may each come from a file instead (`<NAME>_FILE`, config-secret-file.ts).
 */
import { BlockList, isIP } from "node:net";
import { isAbsolute, resolve } from "node:path";
import { hashToken } from "@fleetback/crypto";
import { parseLocalLogin, parseSsoConfig, type SsoConfig } from "./auth/sso-config.js";
import { secretSetting } from "./config-secret-file.js";

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export interface ListenAddress {
  host: string;
  port: number;
}

export interface Config {
  listen: ListenAddress;
  /** Public URL without a trailing slash; used in the installer, links and help URLs. */
  baseUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  bootstrapToken: string | undefined;
  tls: { certFile: string; keyFile: string } | undefined;
  logLevel: LogLevel;
  /** IANA zone the maintenance cadences are read in (FLEETBACK_TZ). */
  timeZone: string;
  /** A `pnpm release` directory imported into the agent store at start (FLEETBACK_RELEASE_DIR). */
  releaseDir: string | undefined;
  /** Reverse proxies whose X-Forwarded-For is believed (FLEETBACK_TRUSTED_PROXIES); addresses or CIDRs. */
  trustedProxies: string[];
  /**
   * Internal addresses or CIDRs notification channels may reach anyway
   * (FLEETBACK_NOTIFY_ALLOW_NETWORKS); every other loopback, private, link-local or metadata
   * address is refused (notifications/address-policy.ts).
   */
  notifyAllowNetworks: string[];
  /**
   * How long a host's agent may stay offline before `agent_offline` opens
   * (FLEETBACK_AGENT_OFFLINE_ALERT_AFTER, default 1h); null when set to `off`.
   */
  agentOfflineAlertAfterMs: number | null;
  /** How often fleet health (freshness and its alerts) is evaluated (FLEETBACK_HEALTH_INTERVAL, default 60s). */
  healthIntervalMs: number;
  /**
   * How often due maintenance runs are looked for (FLEETBACK_MAINTENANCE_INTERVAL, default 60s);
   * a cadence's slot is dispatched at the first look after it.
   */
  maintenanceIntervalMs: number;
  /**
   * FLEETBACK_FORGET_HOLD_SHARE: a forget planned by the server that would remove more than this
   * share of a group's snapshots waits for an admin (holds/); 1 never holds.
   */
  forgetHoldShare: number;
  /** SHA-256 of FLEETBACK_METRICS_TOKEN, the bearer token /metrics accepts; the token is not kept. */
  metricsTokenHash: string | undefined;
  /** Addresses or CIDRs that may read /metrics without the token (FLEETBACK_METRICS_ALLOW_NETWORKS). */
  metricsAllowNetworks: string[];
  /** Largest file or folder archive an operator may download from a snapshot (FLEETBACK_DOWNLOAD_MAX_BYTES, default 1 GiB). */
  downloadMaxBytes: number;
  /**
   * The rest-server password file the enrol page's htpasswd lines write (FLEETBACK_HTPASSWD_PATH),
   * so they name the file the operator's rest-server reads (docker-compose.yml sets its own).
   */
  htpasswdPath: string;
  /** OpenID Connect single sign-on (FLEETBACK_OIDC_*); undefined when not configured. */
  sso: SsoConfig | undefined;
  /**
   * False when FLEETBACK_LOCAL_LOGIN=off: password sign-in is refused once an enabled single
   * sign-on admin exists (until then it stays on, so nobody is locked out).
   */
  localLogin: boolean;
}

export type ConfigResult = { ok: true; config: Config } | { ok: false; errors: string[] };

const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** rest-server's password file when run as Debian's package does (its `--path` plus `.htpasswd`). */
export const DEFAULT_HTPASSWD_PATH = "/var/lib/rest-server/.htpasswd";

export function parseListen(value: string): ListenAddress | string {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]*)):(\d{1,5})$/.exec(value.trim());
  if (!match) {
    return `"${value}" is not host:port (examples: 127.0.0.1:8080, 0.0.0.0:8080, [::1]:8080)`;
  }
  const port = Number(match[3]);
  if (port > 65535) {
    return `port ${port} is out of range 0-65535`;
  }
  const host = match[1] ?? (match[2] || "0.0.0.0");
  return { host, port };
}

function formatHostForUrl(host: string): string {
  const shown = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return shown.includes(":") ? `[${shown}]` : shown;
}

export function listenUrl(listen: ListenAddress, tls: boolean): string {
  return `${tls ? "https" : "http"}://${formatHostForUrl(listen.host)}:${listen.port}`;
}

function parseBaseUrl(value: string): string | { error: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { error: `"${value}" is not an absolute URL` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { error: `"${value}" must start with http:// or https://` };
  }
  if (url.username || url.password || url.search || url.hash) {
    return { error: "must not contain credentials, a query or a fragment" };
  }
  return url.toString().replace(/\/+$/, "");
}

export function loadConfig(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): ConfigResult {
  const errors: string[] = [];

  const listenRaw = env.FLEETBACK_LISTEN ?? "127.0.0.1:8080";
  const listenParsed = parseListen(listenRaw);
  if (typeof listenParsed === "string") {
    errors.push(`FLEETBACK_LISTEN: ${listenParsed}`);
  }
  const listen = typeof listenParsed === "string" ? { host: "127.0.0.1", port: 8080 } : listenParsed;

  const certFile = env.FLEETBACK_TLS_CERT || undefined;
  const keyFile = env.FLEETBACK_TLS_KEY || undefined;
  if (Boolean(certFile) !== Boolean(keyFile)) {
    errors.push("FLEETBACK_TLS_CERT and FLEETBACK_TLS_KEY: set both to serve HTTPS, or neither");
  }
  const tls =
    certFile && keyFile ? { certFile: resolve(cwd, certFile), keyFile: resolve(cwd, keyFile) } : undefined;

  let baseUrl = listenUrl(listen, tls !== undefined);
  if (env.FLEETBACK_BASE_URL) {
    const parsed = parseBaseUrl(env.FLEETBACK_BASE_URL);
    if (typeof parsed === "string") {
      baseUrl = parsed;
    } else {
      errors.push(`FLEETBACK_BASE_URL: ${parsed.error}`);
    }
  }

  const dataDirRaw = env.FLEETBACK_DATA_DIR || "./data";
  const dataDir = isAbsolute(dataDirRaw) ? dataDirRaw : resolve(cwd, dataDirRaw);

  const databaseUrlSetting = secretSetting(env, "DATABASE_URL", cwd, errors);
  const databaseUrl = databaseUrlSetting?.value;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    errors.push(
      `${databaseUrlSetting?.variable}: must start with postgres:// or postgresql:// (unset it to use the embedded database)`,
    );
  }

  const bootstrapSetting = secretSetting(env, "FLEETBACK_BOOTSTRAP_TOKEN", cwd, errors);
  const bootstrapToken = bootstrapSetting?.value;
  if (bootstrapToken !== undefined && bootstrapToken.length < 16) {
    errors.push(`${bootstrapSetting?.variable}: must be at least 16 characters`);
  }

  const logLevelRaw = (env.FLEETBACK_LOG_LEVEL || "info").toLowerCase();
  const logLevel = LOG_LEVELS.find((level) => level === logLevelRaw);
  if (!logLevel) {
    errors.push(`FLEETBACK_LOG_LEVEL: "${logLevelRaw}" is not one of ${LOG_LEVELS.join(", ")}`);
  }

  const timeZone = env.FLEETBACK_TZ || "UTC";
  if (!isTimeZone(timeZone)) {
    errors.push(`FLEETBACK_TZ: "${timeZone}" is not an IANA time zone (e.g. UTC, Europe/Berlin)`);
  }

  const releaseDirRaw = env.FLEETBACK_RELEASE_DIR || undefined;
  const releaseDir = releaseDirRaw === undefined ? undefined : resolve(cwd, releaseDirRaw);

  const trustedProxies = networkList(env, "FLEETBACK_TRUSTED_PROXIES", "10.0.0.1", errors);
  const notifyAllowNetworks = networkList(env, "FLEETBACK_NOTIFY_ALLOW_NETWORKS", "127.0.0.1", errors);

  // Seconds are allowed for a small fleet on a steady link (and for tests); a value under the
  // agents' reconnect time after a server restart alerts on every restart, which is the operator's call.
  const offlineAfter = parseDuration(env.FLEETBACK_AGENT_OFFLINE_ALERT_AFTER || "1h", {
    minMs: 10_000,
    maxMs: 30 * 86_400_000,
    off: true,
  });
  if (typeof offlineAfter === "string") {
    errors.push(`FLEETBACK_AGENT_OFFLINE_ALERT_AFTER: ${offlineAfter}`);
  }
  const healthInterval = parseDuration(env.FLEETBACK_HEALTH_INTERVAL || "60s", {
    minMs: 5_000,
    maxMs: 3_600_000,
  });
  if (typeof healthInterval === "string") {
    errors.push(`FLEETBACK_HEALTH_INTERVAL: ${healthInterval}`);
  }

  // Down to 1 s: a cadence may name seconds (six-field cron), and a run is dispatched up to one
  // interval after its slot.
  const maintenanceInterval = parseDuration(env.FLEETBACK_MAINTENANCE_INTERVAL || "60s", {
    minMs: 1_000,
    maxMs: 3_600_000,
  });
  if (typeof maintenanceInterval === "string") {
    errors.push(`FLEETBACK_MAINTENANCE_INTERVAL: ${maintenanceInterval}`);
  }

  const metricsSetting = secretSetting(env, "FLEETBACK_METRICS_TOKEN", cwd, errors);
  const metricsToken = metricsSetting?.value;
  if (metricsToken !== undefined && metricsToken.length < 16) {
    errors.push(`${metricsSetting?.variable}: must be at least 16 characters`);
  }
  const metricsAllowNetworks = networkList(env, "FLEETBACK_METRICS_ALLOW_NETWORKS", "10.0.0.5", errors);

  const downloadMaxBytes = parseByteSize(env.FLEETBACK_DOWNLOAD_MAX_BYTES || "1G");
  if (typeof downloadMaxBytes === "string") {
    errors.push(`FLEETBACK_DOWNLOAD_MAX_BYTES: ${downloadMaxBytes}`);
  }

  const holdShareText = env.FLEETBACK_FORGET_HOLD_SHARE || "0.5";
  const forgetHoldShare = /^(0(\.\d+)?|1(\.0+)?)$/.test(holdShareText) ? Number(holdShareText) : Number.NaN;
  if (!(forgetHoldShare > 0)) {
    errors.push(
      `FLEETBACK_FORGET_HOLD_SHARE: "${holdShareText}" is not a share above 0 and at most 1 (examples: 0.5, 0.8, 1 to never hold)`,
    );
  }

  // Pasted into a shell line on the page: an absolute path of characters that need no quoting.
  const htpasswdPath = env.FLEETBACK_HTPASSWD_PATH || DEFAULT_HTPASSWD_PATH;
  if (!/^\/[A-Za-z0-9._@+/-]+$/.test(htpasswdPath)) {
    errors.push(
      `FLEETBACK_HTPASSWD_PATH: "${htpasswdPath}" is not an absolute path of letters, digits and . _ @ + - / (example: /data/.htpasswd)`,
    );
  }

  const sso = parseSsoConfig(env, cwd, errors);
  // Up to the 7 days of any session; under 5 minutes would send people to the provider mid-task.
  const ssoSessionMax = parseDuration(env.FLEETBACK_OIDC_SESSION_MAX || "8h", {
    minMs: 300_000,
    maxMs: 7 * 86_400_000,
  });
  if (typeof ssoSessionMax === "string") {
    errors.push(`FLEETBACK_OIDC_SESSION_MAX: ${ssoSessionMax}`);
  } else if (sso !== undefined && ssoSessionMax !== null) {
    sso.sessionMaxMs = ssoSessionMax;
  }
  const localLogin = parseLocalLogin(
    env,
    env.FLEETBACK_OIDC_ISSUER !== undefined && env.FLEETBACK_OIDC_ISSUER !== "",
    errors,
  );

  if (errors.length > 0) {
    return { ok: false, errors };
  }
  return {
    ok: true,
    config: {
      listen,
      baseUrl,
      dataDir,
      databaseUrl,
      bootstrapToken,
      tls,
      logLevel: logLevel ?? "info",
      timeZone,
      releaseDir,
      trustedProxies,
      notifyAllowNetworks,
      agentOfflineAlertAfterMs: typeof offlineAfter === "string" ? null : offlineAfter,
      healthIntervalMs: typeof healthInterval === "number" ? healthInterval : 60_000,
      maintenanceIntervalMs: typeof maintenanceInterval === "number" ? maintenanceInterval : 60_000,
      forgetHoldShare,
      metricsTokenHash: metricsToken === undefined ? undefined : hashToken(metricsToken),
      metricsAllowNetworks,
      downloadMaxBytes: typeof downloadMaxBytes === "number" ? downloadMaxBytes : 1024 ** 3,
      htpasswdPath,
      sso,
      localLogin,
    },
  };
}

const BYTE_UNITS = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 } as const;

/** Bytes, or a whole number with K, M, G or T (powers of 1024; `KiB`, `MB` read the same), 1 KiB to 1 TiB. */
export function parseByteSize(value: string): number | string {
  const match = /^(\d{1,13})\s*([kmgt]?)(?:i?b)?$/.exec(value.trim().toLowerCase());
  const bytes = match ? Number(match[1]) * BYTE_UNITS[match[2] as keyof typeof BYTE_UNITS] : Number.NaN;
  if (!(bytes >= 1024 && bytes <= 1024 ** 4)) {
    return `"${value}" is not a size from 1K to 1T (examples: 1073741824, 500M, 2G)`;
  }
  return bytes;
}

/** A comma-separated list of addresses or CIDRs; an entry that is neither is reported by name. */
function networkList(env: NodeJS.ProcessEnv, variable: string, example: string, errors: string[]): string[] {
  const entries = (env[variable] ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  const bad = entries.find((entry) => !isAddressOrCidr(entry));
  if (bad !== undefined) {
    errors.push(
      `${variable}: "${bad}" is not an IP address or CIDR (examples: ${example}, 10.0.0.0/8, fd00::/8)`,
    );
  }
  return entries;
}

const DURATION_UNITS_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

function formatBound(ms: number): string {
  for (const [unit, size] of Object.entries(DURATION_UNITS_MS).reverse()) {
    if (ms % size === 0) {
      return `${ms / size}${unit}`;
    }
  }
  return `${ms}ms`;
}

/**
 * A whole number with s, m, h or d between `minMs` and `maxMs`, or null for `off` when allowed;
 * a string is the problem, to be reported under the variable's name.
 */
export function parseDuration(
  value: string,
  bounds: { minMs: number; maxMs: number; off?: boolean },
): number | null | string {
  const trimmed = value.trim().toLowerCase();
  if (bounds.off && trimmed === "off") {
    return null;
  }
  const match = /^(\d{1,7})([smhd])$/.exec(trimmed);
  const ms = match
    ? Number(match[1]) * DURATION_UNITS_MS[match[2] as keyof typeof DURATION_UNITS_MS]
    : Number.NaN;
  if (!(ms >= bounds.minMs && ms <= bounds.maxMs)) {
    const range = `a duration from ${formatBound(bounds.minMs)} to ${formatBound(bounds.maxMs)}`;
    return `"${value}" is not ${bounds.off ? `off or ${range}` : range} (examples: 90s, 30m, 1h, 2d)`;
  }
  return ms;
}

/** An IPv4/IPv6 address, or one with a prefix length that fits its family. */
export function isAddressOrCidr(entry: string): boolean {
  const [address = "", prefix, ...rest] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || rest.length > 0) {
    return false;
  }
  if (prefix === undefined) {
    return true;
  }
  const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
  return bits >= 0 && bits <= (family === 4 ? 32 : 128);
}

/** The set `isAddressOrCidr` entries describe, for matching a peer address against. */
export function trustedProxyList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = "", prefix] = entry.split("/");
    const type = isIP(address) === 6 ? "ipv6" : "ipv4";
    if (prefix === undefined) {
      list.addAddress(address, type);
    } else {
      list.addSubnet(address, Number(prefix), type);
    }
  }
  return list;
}

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

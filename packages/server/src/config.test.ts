import { hashToken } from "@fleetback/crypto";
import { describe, expect, it } from "vitest";
import { loadConfig, parseListen } from "./config.js";

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const result = loadConfig({}, "/srv/fleetback");
    expect(result).toEqual({
      ok: true,
      config: {
        listen: { host: "127.0.0.1", port: 8080 },
        baseUrl: "http://127.0.0.1:8080",
        dataDir: "/srv/fleetback/data",
        databaseUrl: undefined,
        bootstrapToken: undefined,
        tls: undefined,
        logLevel: "info",
        timeZone: "UTC",
        releaseDir: undefined,
        trustedProxies: [],
        notifyAllowNetworks: [],
        metricsTokenHash: undefined,
        metricsAllowNetworks: [],
        agentOfflineAlertAfterMs: 3_600_000,
        healthIntervalMs: 60_000,
        maintenanceIntervalMs: 60_000,
        forgetHoldShare: 0.5,
        downloadMaxBytes: 1024 ** 3,
        htpasswdPath: "/var/lib/rest-server/.htpasswd",
        sso: undefined,
        localLogin: true,
      },
    });
  });

  it("reads every variable", () => {
    const result = loadConfig(
      {
        FLEETBACK_LISTEN: "0.0.0.0:9000",
        FLEETBACK_BASE_URL: "https://backup.example.org/",
        FLEETBACK_DATA_DIR: "/var/lib/fleetback",
        DATABASE_URL: "postgresql://fleet@db/fleet",
        FLEETBACK_BOOTSTRAP_TOKEN: "0123456789abcdef0123",
        FLEETBACK_TLS_CERT: "cert.pem",
        FLEETBACK_TLS_KEY: "/etc/key.pem",
        FLEETBACK_LOG_LEVEL: "DEBUG",
        FLEETBACK_TZ: "Europe/Berlin",
        FLEETBACK_RELEASE_DIR: "release",
        FLEETBACK_TRUSTED_PROXIES: " 10.0.0.1, 192.168.0.0/16 ,fd00::/8",
        FLEETBACK_NOTIFY_ALLOW_NETWORKS: "127.0.0.0/8, 10.1.2.3,fd00::/8",
        FLEETBACK_METRICS_TOKEN: "metrics-token-0123456789",
        FLEETBACK_METRICS_ALLOW_NETWORKS: "10.9.0.0/16, 192.0.2.7",
        FLEETBACK_AGENT_OFFLINE_ALERT_AFTER: "2h",
        FLEETBACK_HEALTH_INTERVAL: "30s",
        FLEETBACK_MAINTENANCE_INTERVAL: "5m",
        FLEETBACK_FORGET_HOLD_SHARE: "0.8",
        FLEETBACK_DOWNLOAD_MAX_BYTES: "500M",
        FLEETBACK_HTPASSWD_PATH: "/data/.htpasswd-hosts",
        FLEETBACK_OIDC_ISSUER: "https://login.example.org/realms/ops/",
        FLEETBACK_OIDC_CLIENT_ID: "fleetback",
        FLEETBACK_OIDC_CLIENT_SECRET: "client-secret-0123",
        FLEETBACK_OIDC_SCOPES: "openid profile groups",
        FLEETBACK_OIDC_ROLE_CLAIM: "realm_access.roles",
        FLEETBACK_OIDC_ROLE_MAP: "fleet-admins=admin, fleet-ops=operator",
        FLEETBACK_OIDC_DEFAULT_ROLE: "none",
        FLEETBACK_OIDC_USERNAME_CLAIM: "email",
        FLEETBACK_OIDC_NAME: "Ops login",
        FLEETBACK_OIDC_ALLOWED_DOMAINS: "example.org",
        FLEETBACK_OIDC_REQUIRED_CLAIM: "groups=backup",
        FLEETBACK_OIDC_SESSION_MAX: "4h",
        FLEETBACK_LOCAL_LOGIN: "off",
      },
      "/srv",
    );
    expect(result.ok && result.config).toEqual({
      listen: { host: "0.0.0.0", port: 9000 },
      baseUrl: "https://backup.example.org",
      dataDir: "/var/lib/fleetback",
      databaseUrl: "postgresql://fleet@db/fleet",
      bootstrapToken: "0123456789abcdef0123",
      tls: { certFile: "/srv/cert.pem", keyFile: "/etc/key.pem" },
      logLevel: "debug",
      timeZone: "Europe/Berlin",
      releaseDir: "/srv/release",
      trustedProxies: ["10.0.0.1", "192.168.0.0/16", "fd00::/8"],
      notifyAllowNetworks: ["127.0.0.0/8", "10.1.2.3", "fd00::/8"],
      // Only the token's SHA-256 is kept.
      metricsTokenHash: hashToken("metrics-token-0123456789"),
      metricsAllowNetworks: ["10.9.0.0/16", "192.0.2.7"],
      agentOfflineAlertAfterMs: 7_200_000,
      healthIntervalMs: 30_000,
      maintenanceIntervalMs: 300_000,
      forgetHoldShare: 0.8,
      downloadMaxBytes: 500 * 1024 ** 2,
      htpasswdPath: "/data/.htpasswd-hosts",
      sso: {
        issuer: "https://login.example.org/realms/ops",
        clientId: "fleetback",
        clientSecret: "client-secret-0123",
        scopes: "openid profile groups",
        roleClaim: "realm_access.roles",
        roleMap: new Map([
          ["fleet-admins", "admin"],
          ["fleet-ops", "operator"],
        ]),
        defaultRole: null,
        access: { allowedDomains: ["example.org"], requiredClaim: { name: "groups", value: "backup" } },
        sessionMaxMs: 4 * 3_600_000,
        usernameClaim: "email",
        displayName: "Ops login",
        allowHttp: false,
      },
      localLogin: false,
    });
  });

  it("collects every error, each naming its variable", () => {
    const result = loadConfig({
      FLEETBACK_LISTEN: "localhost",
      FLEETBACK_BASE_URL: "ftp://x",
      DATABASE_URL: "mysql://x",
      FLEETBACK_BOOTSTRAP_TOKEN: "short",
      FLEETBACK_TLS_CERT: "only-cert.pem",
      FLEETBACK_LOG_LEVEL: "loud",
      FLEETBACK_TZ: "Mars/Olympus",
      FLEETBACK_TRUSTED_PROXIES: "10.0.0.1,10.0.0.0/33",
      FLEETBACK_NOTIFY_ALLOW_NETWORKS: "127.0.0.0/8,localhost",
      FLEETBACK_METRICS_TOKEN: "too-short",
      FLEETBACK_METRICS_ALLOW_NETWORKS: "10.0.0.0/8,prometheus",
      FLEETBACK_DOWNLOAD_MAX_BYTES: "lots",
      FLEETBACK_HTPASSWD_PATH: "data/.htpasswd; rm -rf /",
    });
    expect(result.ok).toBe(false);
    const errors = result.ok ? [] : result.errors;
    for (const name of [
      "FLEETBACK_LISTEN",
      "FLEETBACK_BASE_URL",
      "FLEETBACK_TZ",
      "DATABASE_URL",
      "FLEETBACK_BOOTSTRAP_TOKEN",
      "FLEETBACK_TLS_CERT",
      "FLEETBACK_LOG_LEVEL",
      "FLEETBACK_TRUSTED_PROXIES",
      "FLEETBACK_NOTIFY_ALLOW_NETWORKS",
      "FLEETBACK_METRICS_TOKEN",
      "FLEETBACK_METRICS_ALLOW_NETWORKS",
      "FLEETBACK_DOWNLOAD_MAX_BYTES",
      "FLEETBACK_HTPASSWD_PATH",
    ]) {
      expect(errors.some((line) => line.startsWith(name))).toBe(true);
    }
  });

  it("shows the loopback address in the default base URL when listening on all interfaces", () => {
    const result = loadConfig({ FLEETBACK_LISTEN: "0.0.0.0:8081" });
    expect(result.ok && result.config.baseUrl).toBe("http://127.0.0.1:8081");
  });
});

describe("FLEETBACK_TRUSTED_PROXIES", () => {
  it.each(["proxy.internal", "10.0.0.1/", "10.0.0.0/33", "::1/129", "10.0.0.1/8/8", "10.0.0.256"])(
    "refuses %s in one line naming the variable",
    (entry) => {
      const result = loadConfig({ FLEETBACK_TRUSTED_PROXIES: `127.0.0.1, ${entry}` });
      expect(result.ok ? [] : result.errors).toEqual([
        `FLEETBACK_TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR (examples: 10.0.0.1, 10.0.0.0/8, fd00::/8)`,
      ]);
    },
  );
});

describe("FLEETBACK_NOTIFY_ALLOW_NETWORKS", () => {
  it.each(["localhost", "10.0.0.0/33", "::1/129", "10.0.0.1/8/8", "10.0.0.1/x"])(
    "refuses %s in one line naming the variable",
    (entry) => {
      const result = loadConfig({ FLEETBACK_NOTIFY_ALLOW_NETWORKS: `127.0.0.0/8, ${entry}` });
      expect(result.ok ? [] : result.errors).toEqual([
        `FLEETBACK_NOTIFY_ALLOW_NETWORKS: "${entry}" is not an IP address or CIDR (examples: 127.0.0.1, 10.0.0.0/8, fd00::/8)`,
      ]);
    },
  );
});

describe("FLEETBACK_FORGET_HOLD_SHARE", () => {
  it.each(["0", "1.5", "half", "-0.2", "50%"])("refuses %s in one line naming the variable", (value) => {
    const result = loadConfig({ FLEETBACK_FORGET_HOLD_SHARE: value });
    expect(result.ok ? [] : result.errors).toEqual([
      `FLEETBACK_FORGET_HOLD_SHARE: "${value}" is not a share above 0 and at most 1 (examples: 0.5, 0.8, 1 to never hold)`,
    ]);
  });

  it.each([
    ["0.25", 0.25],
    ["1", 1],
    ["1.0", 1],
  ])("reads %s", (value, share) => {
    const result = loadConfig({ FLEETBACK_FORGET_HOLD_SHARE: value });
    expect(result.ok && result.config.forgetHoldShare).toBe(share);
  });
});

describe("parseListen", () => {
  it.each([
    ["127.0.0.1:8080", { host: "127.0.0.1", port: 8080 }],
    ["[::1]:443", { host: "::1", port: 443 }],
    [":8080", { host: "0.0.0.0", port: 8080 }],
    ["backup.internal:0", { host: "backup.internal", port: 0 }],
  ])("accepts %s", (value, expected) => {
    expect(parseListen(value)).toEqual(expected);
  });

  it.each(["8080", "host:", "host:70000", "a b:80", "http://x:80"])("rejects %s", (value) => {
    expect(typeof parseListen(value)).toBe("string");
  });
});

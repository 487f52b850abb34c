/**
 * The production layout (README: "Production: replicas behind a proxy") checked without a
 * container engine: `docker-compose config` validates docker-compose.yml against the Compose
 * schema and resolves it, `caddy validate` and `caddy adapt` read deploy/Caddyfile as Caddy does,
 * and the facts that make two replicas one service are asserted on what those tools resolved:
 * one database URL, one data dir volume (secret.key and release.key), only variables the server
 * reads, the proxy routing to both replicas with /readyz health checks, and a multi-stage,
 * non-root Dockerfile. Issue 34: secrets reach containers as compose secret files
 * (deploy/make-secrets.sh writes them, run here for real), never as environment values; Caddy and
 * both rest-servers have health checks; the server image is built once for both replicas; every
 * pulled image is pinned to an exact version; the enrol page's htpasswd path is the append-only
 * rest-server's file; the replicas join a monitoring network with a metrics token.
 * docker-compose and caddy are Debian packages (.ci/run installs them); with CI=true a missing one
 * fails its tests instead of skipping them.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "./support/paths.js";
import { missingNote } from "./support/tools.js";

const ci = /^(true|1)$/i.test(process.env.CI ?? "");
const onPath = (name: string) => spawnSync("sh", ["-c", `command -v ${name}`]).status === 0;
const hasCompose = onPath("docker-compose");
const hasCaddy = onPath("caddy");

/** Under CI a missing tool is a failure of the tests that need it, never a skip. */
function suiteTitle(title: string, needs: Record<string, boolean>): { title: string; skip: boolean } {
  const note = missingNote(needs);
  return ci ? { title, skip: false } : { title: `${title}${note}`, skip: note !== "" };
}
function requireTool(name: string, present: boolean, pkg: string): void {
  if (!present) {
    throw new Error(
      `${name} is not on PATH (CI=true: no skipping); .ci/run installs the Debian package ${pkg}`,
    );
  }
}

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) {
    rmSync(dir, { recursive: true, force: true });
  }
});
function temp(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `fleetback-${label}-`));
  temps.push(dir);
  return dir;
}

const composeFile = join(repoRoot, "docker-compose.yml");
const caddyfile = join(repoRoot, "deploy", "Caddyfile");
const REQUIRED = {
  PUBLIC_HOST: "backup.example.com",
};

/** docker-compose on the repository's file, with only `vars` set (an operator's .env is ignored). */
function compose(args: string[], vars: Record<string, string> = REQUIRED, file = composeFile) {
  requireTool("docker-compose", hasCompose, "docker-compose");
  const home = temp("compose-home");
  const envFile = join(home, "empty.env");
  writeFileSync(envFile, "");
  return spawnSync(
    "docker-compose",
    ["--project-directory", repoRoot, "--env-file", envFile, "-f", file, ...args],
    { encoding: "utf8", env: { PATH: process.env.PATH, HOME: home, ...vars }, timeout: 60_000 },
  );
}

interface Service {
  image?: string;
  pull_policy?: string;
  secrets?: Array<{ source: string; target?: string }>;
  build?: { context: string; dockerfile?: string; target?: string };
  restart?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  networks?: Record<string, { ipv4_address?: string } | null>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; interval?: string; retries?: number };
  ports?: Array<{ published: number; target: number; protocol?: string }>;
}
interface Resolved {
  services: Record<string, Service>;
  networks: Record<
    string,
    { internal?: boolean; name?: string; ipam?: { config: Array<{ subnet: string }> } }
  >;
  volumes: Record<string, unknown>;
  secrets: Record<string, { file?: string }>;
}

let resolved: Resolved | undefined;
/** The file as docker-compose resolves it (anchors merged, variables interpolated), as JSON. */
function resolvedConfig(): Resolved {
  resolved ??= resolve();
  return resolved;
}
function resolve(): Resolved {
  const result = compose(["config"]);
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  // python3 and its yaml module come with the docker-compose package.
  const json = spawnSync(
    "python3",
    ["-c", "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)"],
    { input: result.stdout, encoding: "utf8" },
  );
  expect(json.status, json.stderr).toBe(0);
  return JSON.parse(json.stdout) as Resolved;
}

/** Named-volume mounts of a service as target → volume name (binds start with / or .). */
function namedMounts(service: Service): Map<string, string> {
  const mounts = new Map<string, string>();
  for (const spec of service.volumes ?? []) {
    const [source = "", target = ""] = spec.split(":");
    if (!source.startsWith("/") && !source.startsWith(".")) {
      mounts.set(target, source);
    }
  }
  return mounts;
}

/** The variables packages/server/src/config.ts reads (single sign-on's through auth/sso-config.ts). */
function serverVariables(): Set<string> {
  const source = ["config.ts", "auth/sso-config.ts"]
    .map((file) => readFileSync(join(repoRoot, "packages", "server", "src", file), "utf8"))
    .join("\n");
  // `env.NAME`, or a list read through a helper as `(env, "NAME", …)`.
  const read = /\benv\.([A-Z][A-Z0-9_]*)|\(env, "([A-Z][A-Z0-9_]*)"/g;
  const names = new Set([...source.matchAll(read)].map((match) => match[1] ?? match[2] ?? ""));
  // A secret setting read through config-secret-file.ts is read as NAME_FILE too.
  for (const match of source.matchAll(/secretSetting\(env, "([A-Z][A-Z0-9_]*)"/g)) {
    names.add(`${match[1]}_FILE`);
  }
  return names;
}

/** Secret settings: their values never appear in any service's environment. */
const SECRET_VARIABLES = [
  "DATABASE_URL",
  "FLEETBACK_BOOTSTRAP_TOKEN",
  "FLEETBACK_METRICS_TOKEN",
  "FLEETBACK_OIDC_CLIENT_SECRET",
  "POSTGRES_PASSWORD",
];

/** The secret a `<NAME>_FILE` variable points at, checked to be mounted into that service. */
function mountedSecret(config: Resolved, service: Service, path: string | undefined): string {
  const match = /^\/run\/secrets\/([a-z0-9-]+)$/.exec(path ?? "");
  const name = match?.[1] ?? "";
  expect(match, `${path} is not under /run/secrets`).not.toBeNull();
  expect((service.secrets ?? []).map((secret) => secret.target ?? secret.source)).toContain(name);
  expect(config.secrets[name]?.file).toBe(join(repoRoot, "secrets", name));
  return name;
}

/** Services that build an image, and every service running an image one of those builds. */
function locallyBuilt(config: Resolved): Set<string> {
  const built = new Set(
    Object.values(config.services)
      .filter((service) => service.build !== undefined)
      .map((service) => service.image ?? ""),
  );
  return new Set(
    Object.entries(config.services)
      .filter(([, service]) => service.build !== undefined || built.has(service.image ?? ""))
      .map(([name]) => name),
  );
}

/** Services running the image of the Dockerfile's default stage (the server); `keeper` names its own stage. */
const replicas = (config: Resolved) => {
  const serverImages = new Set(
    Object.values(config.services)
      .filter((service) => service.build !== undefined && service.build.target === undefined)
      .map((service) => service.image),
  );
  return Object.entries(config.services)
    .filter(([, service]) => serverImages.has(service.image))
    .map(([name]) => name)
    .sort();
};

const composeSuite = suiteTitle("docker-compose.yml", { "docker-compose (Debian package)": hasCompose });
describe.skipIf(composeSuite.skip)(composeSuite.title, () => {
  it("passes docker-compose config -q (the Compose schema, without a daemon)", () => {
    const result = compose(["config", "-q"]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it("refuses to resolve without each required variable, naming it", () => {
    for (const name of Object.keys(REQUIRED)) {
      const vars: Record<string, string> = { ...REQUIRED };
      delete vars[name];
      const result = compose(["config", "-q"], vars);
      expect(result.status, name).not.toBe(0);
      expect(result.stderr).toContain(`set ${name} in .env`);
    }
  });

  it("fails on a file the Compose schema refuses", () => {
    const broken = join(temp("compose-broken"), "docker-compose.yml");
    writeFileSync(broken, readFileSync(composeFile, "utf8").replace("restart: unless-stopped", "restart: 3"));
    const result = compose(["config", "-q"], REQUIRED, broken);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/restart/);
  });

  it("runs PostgreSQL 16, two replicas of the Dockerfile, Caddy, two rest-servers and a keeper, each restarted and on named volumes", () => {
    const config = resolvedConfig();
    expect(Object.keys(config.services).sort()).toEqual([
      "keeper",
      "postgres",
      "proxy",
      "rest-server",
      "rest-server-append",
      "server-a",
      "server-b",
    ]);
    expect(config.services.postgres?.image).toMatch(/^postgres:16\.\d+$/);
    expect(config.services.proxy?.image).toMatch(/^caddy:2\.\d+\.\d+(-alpine)?$/);
    expect(config.services["rest-server"]?.image).toMatch(/^restic\/rest-server(:|$)/);
    expect(replicas(config)).toEqual(["server-a", "server-b"]);
    for (const [name, service] of Object.entries(config.services)) {
      expect(service.restart, name).toMatch(/^(always|unless-stopped)$/);
      for (const volume of namedMounts(service).values()) {
        expect(Object.keys(config.volumes), `${name}: ${volume}`).toContain(volume);
      }
    }
    expect(namedMounts(config.services.postgres ?? {}).get("/var/lib/postgresql/data")).toBeDefined();
    expect(namedMounts(config.services["rest-server"] ?? {}).get("/data")).toBeDefined();
    expect(config.services.postgres?.healthcheck?.test).toContain("pg_isready");
  });

  it("gives both replicas one database URL, one data dir volume (the same keys) and only variables the server reads", () => {
    const config = resolvedConfig();
    const [a, b] = ["server-a", "server-b"].map((name) => config.services[name] ?? {});
    if (!a || !b) {
      throw new Error("no replicas");
    }
    expect(a.environment).toEqual(b.environment);
    expect(a.secrets).toEqual(b.secrets);
    const env = a.environment ?? {};
    expect(mountedSecret(config, a, env.DATABASE_URL_FILE)).toBe("database-url");
    expect(env.FLEETBACK_BASE_URL).toBe(`https://${REQUIRED.PUBLIC_HOST}`);
    const known = serverVariables();
    expect(known.has("DATABASE_URL")).toBe(true);
    expect(known.has("DATABASE_URL_FILE")).toBe(true);
    for (const name of Object.keys(env)) {
      expect(known, `${name} is not read by packages/server/src/config.ts`).toContain(name);
    }
    // secret.key and release.key live in FLEETBACK_DATA_DIR: the same named volume for both.
    const dataDir = env.FLEETBACK_DATA_DIR ?? "";
    expect(dataDir).toMatch(/^\//);
    expect(namedMounts(a).get(dataDir)).toBeDefined();
    expect(namedMounts(a).get(dataDir)).toBe(namedMounts(b).get(dataDir));
    expect(a.image).toBe(b.image);
    expect(a.build?.context).toBe(repoRoot.replace(/\/$/, ""));
    const port = env.FLEETBACK_LISTEN?.split(":").pop();
    for (const replica of [a, b]) {
      expect(replica.depends_on?.postgres?.condition).toBe("service_healthy");
      expect(replica.healthcheck?.test.join(" ")).toContain(`127.0.0.1:${port}/readyz`);
    }
  });

  it("believes X-Forwarded-For from the proxy's fixed address only, and keeps PostgreSQL off the proxy's network", () => {
    const config = resolvedConfig();
    const proxy = config.services.proxy ?? {};
    const trusted = config.services["server-a"]?.environment?.FLEETBACK_TRUSTED_PROXIES;
    const proxyAddresses = Object.values(proxy.networks ?? {}).map((network) => network?.ipv4_address);
    expect(trusted).toBeDefined();
    expect(proxyAddresses).toContain(trusted);
    const [network] = Object.entries(proxy.networks ?? {}).find(([, n]) => n?.ipv4_address === trusted) ?? [];
    const subnet = config.networks[network ?? ""]?.ipam?.config[0]?.subnet ?? "";
    expect(subnet.split(".").slice(0, 3)).toEqual((trusted ?? "").split(".").slice(0, 3));
    const postgresNetworks = Object.keys(config.services.postgres?.networks ?? {});
    expect(postgresNetworks.some((name) => name in (proxy.networks ?? {}))).toBe(false);
    expect(proxy.volumes).toContain(`${join(repoRoot, "deploy", "Caddyfile")}:/etc/caddy/Caddyfile:ro`);
    expect(proxy.environment?.PUBLIC_HOST).toBe(REQUIRED.PUBLIC_HOST);
    expect((proxy.ports ?? []).map((port) => port.target)).toEqual(expect.arrayContaining([80, 443, 8000]));
  });

  it("gives hosts an append-only endpoint and the full one to the keeper alone, on one data volume (issue 33)", () => {
    const config = resolvedConfig();
    const append = config.services["rest-server-append"] ?? {};
    const full = config.services["rest-server"] ?? {};
    const keeper = config.services.keeper ?? {};
    expect(namedMounts(append).get("/data")).toBe(namedMounts(full).get("/data"));
    expect(append.environment?.OPTIONS?.split(/\s+/)).toContain("--append-only");
    expect(full.environment?.OPTIONS?.split(/\s+/)).not.toContain("--append-only");
    // Other logins for hosts than for the keeper: a host's login does not open the full endpoint.
    expect(append.environment?.PASSWORD_FILE).toBe("/data/.htpasswd-hosts");
    expect(full.environment?.PASSWORD_FILE ?? "/data/.htpasswd").not.toBe("/data/.htpasswd-hosts");
    // The full endpoint shares a network with the keeper only, and that network is internal.
    const fullNetworks = Object.keys(full.networks ?? {});
    expect(fullNetworks.length).toBeGreaterThan(0);
    for (const network of fullNetworks) {
      expect(config.networks[network]?.internal, network).toBe(true);
      const members = Object.entries(config.services)
        .filter(([, service]) => network in (service.networks ?? {}))
        .map(([name]) => name)
        .sort();
      expect(members, network).toEqual(["keeper", "rest-server"]);
    }
    expect(keeper.build?.target).toBe("keeper");
    expect(keeper.environment?.FLEETBACK_SERVER).toBe(`https://${REQUIRED.PUBLIC_HOST}`);
    expect(namedMounts(keeper).get("/etc/fleetback-agent")).toBeDefined();
    expect(namedMounts(keeper).get("/var/lib/fleetback-agent")).toBeDefined();
  });

  it("passes every secret as a compose secret file, none as an environment value (issue 34)", () => {
    const config = resolvedConfig();
    for (const [name, service] of Object.entries(config.services)) {
      for (const variable of SECRET_VARIABLES) {
        expect(service.environment?.[variable], `${name}: ${variable}`).toBeUndefined();
      }
    }
    const replica = config.services["server-a"] ?? {};
    const env = replica.environment ?? {};
    const known = serverVariables();
    for (const variable of ["DATABASE_URL", "FLEETBACK_BOOTSTRAP_TOKEN", "FLEETBACK_METRICS_TOKEN"]) {
      expect(known, `${variable}_FILE`).toContain(`${variable}_FILE`);
      mountedSecret(config, replica, env[`${variable}_FILE`]);
    }
    expect(known).toContain("FLEETBACK_OIDC_CLIENT_SECRET_FILE");
    const postgresService = config.services.postgres ?? {};
    expect(mountedSecret(config, postgresService, postgresService.environment?.POSTGRES_PASSWORD_FILE)).toBe(
      "postgres-password",
    );
  });

  it("deploy/make-secrets.sh writes each secret file compose mounts once, the database URL with PostgreSQL's password", () => {
    const config = resolvedConfig();
    const dir = join(temp("compose-secrets"), "secrets");
    const run = () =>
      spawnSync("sh", [join(repoRoot, "deploy", "make-secrets.sh"), dir], {
        encoding: "utf8",
        timeout: 30_000,
      });
    const first = run();
    expect(first.status, first.stderr).toBe(0);
    const read = (name: string) => readFileSync(join(dir, name), "utf8");
    const written = Object.fromEntries(Object.keys(config.secrets).map((name) => [name, read(name)]));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const [name, text] of Object.entries(written)) {
      // One line, as the server reads a secret file; 0444 for the containers' own users.
      expect(text, name).toMatch(/^[^\n]+\n$/);
      expect(statSync(join(dir, name)).mode & 0o777, name).toBe(0o444);
    }
    expect(written["bootstrap-token"]?.trim().length).toBeGreaterThanOrEqual(16);
    expect(written["metrics-token"]?.trim().length).toBeGreaterThanOrEqual(16);
    const url = new URL(written["database-url"]?.trim() ?? "");
    const postgresEnv = config.services.postgres?.environment ?? {};
    expect(url.hostname).toBe("postgres");
    expect(decodeURIComponent(url.password)).toBe(written["postgres-password"]?.trim());
    expect(url.username).toBe(postgresEnv.POSTGRES_USER);
    expect(url.pathname).toBe(`/${postgresEnv.POSTGRES_DB}`);
    expect(new Set(Object.values(written)).size).toBe(Object.keys(written).length);

    // Run again: nothing is replaced (PostgreSQL keeps the password its data was created with).
    const second = run();
    expect(second.status, second.stderr).toBe(0);
    for (const name of Object.keys(written)) {
      expect(read(name), name).toBe(written[name]);
    }
  });

  it("checks the health of Caddy and of both rest-servers (issue 34)", () => {
    const config = resolvedConfig();
    const proxyCheck = config.services.proxy?.healthcheck?.test.join(" ") ?? "";
    expect(proxyCheck).toMatch(/^CMD wget .*http:\/\/127\.0\.0\.1:2019\//);
    for (const name of ["rest-server", "rest-server-append"]) {
      const check = config.services[name]?.healthcheck;
      expect(check?.test[0], name).toBe("CMD-SHELL");
      // rest-server answers 401 on every path without a login: that answer is its health.
      expect(check?.test[1], name).toContain("http://127.0.0.1:8000/");
      expect(check?.test[1], name).toContain("401");
      expect(check?.retries, name).toBeGreaterThan(0);
    }
    for (const [name, service] of Object.entries(config.services)) {
      if (name !== "keeper") {
        expect(service.healthcheck?.test.length, name).toBeGreaterThan(0);
      }
    }
  });

  it("builds the server image once for both replicas and pins every image it pulls to an exact version (issue 34)", () => {
    const config = resolvedConfig();
    const a = config.services["server-a"] ?? {};
    const b = config.services["server-b"] ?? {};
    expect(a.build).toBeDefined();
    expect(b.build).toBeUndefined();
    expect(b.image).toBe(a.image);
    // Never pulled: it is server-a's build, which `up` makes first (server-b starts after it).
    expect(b.pull_policy).toBe("never");
    expect(b.depends_on?.["server-a"]).toBeDefined();
    const builders = Object.values(config.services).filter(
      (service) => service.image === a.image && service.build,
    );
    expect(builders).toHaveLength(1);

    const built = locallyBuilt(config);
    const pinned = /^[a-z0-9./_-]+:\d+(\.\d+)+(-[a-z0-9.]+)?(@sha256:[0-9a-f]{64})?$/;
    for (const [name, service] of Object.entries(config.services)) {
      if (!built.has(name)) {
        expect(service.image, name).toMatch(pinned);
      }
    }
    // The Dockerfile's bases too: an exact Node release on a named Debian suite.
    const froms = readFileSync(join(repoRoot, "Dockerfile"), "utf8").match(/^FROM \S+/gm) ?? [];
    expect(froms.length).toBeGreaterThan(0);
    for (const from of froms) {
      expect(from).toMatch(/^FROM node:\d+\.\d+\.\d+-[a-z]+-slim$/);
    }
  });

  it("makes the enrol page's htpasswd lines write the file the append-only rest-server reads (issue 34)", () => {
    const config = resolvedConfig();
    const path = config.services["server-a"]?.environment?.FLEETBACK_HTPASSWD_PATH;
    expect(serverVariables()).toContain("FLEETBACK_HTPASSWD_PATH");
    expect(path).toBe(config.services["rest-server-append"]?.environment?.PASSWORD_FILE);
    // The file is on the rest-servers' data volume, where that container's htpasswd writes it.
    const [dataMount] = [...namedMounts(config.services["rest-server-append"] ?? {}).keys()];
    expect(path?.startsWith(`${dataMount}/`)).toBe(true);
  });

  it("puts both replicas, and nothing else, on a named monitoring network with the metrics token (issue 34)", () => {
    const config = resolvedConfig();
    const monitoring = Object.entries(config.networks).find(
      ([, network]) => network.name === "fleetback-monitoring",
    );
    expect(monitoring).toBeDefined();
    const [network = ""] = monitoring ?? [];
    const members = Object.entries(config.services)
      .filter(([, service]) => network in (service.networks ?? {}))
      .map(([name]) => name)
      .sort();
    expect(members).toEqual(replicas(config));
    for (const name of members) {
      const service = config.services[name] ?? {};
      expect(mountedSecret(config, service, service.environment?.FLEETBACK_METRICS_TOKEN_FILE)).toBe(
        "metrics-token",
      );
    }
    // The README's scrape config reads that token from a file and names that network.
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const monitoringSection = readme.slice(readme.indexOf("## Monitoring with Prometheus"));
    expect(monitoringSection).toContain("credentials_file:");
    expect(monitoringSection).toContain("fleetback-monitoring");
  });
});

interface CaddyRoute {
  match?: Array<{ host?: string[] }>;
  handle?: CaddyHandler[];
}
interface CaddyHandler {
  handler: string;
  routes?: CaddyRoute[];
  upstreams?: Array<{ dial: string }>;
  load_balancing?: { selection_policy?: { policy: string } };
  health_checks?: { active?: { uri?: string; path?: string } };
  stream_timeout?: unknown;
}

/** Every reverse_proxy handler of the adapted config, by the listener address of its server. */
function reverseProxies(adapted: unknown): Array<{ listen: string[]; handler: CaddyHandler }> {
  const servers = (
    adapted as { apps: { http: { servers: Record<string, { listen: string[]; routes: CaddyRoute[] }> } } }
  ).apps.http.servers;
  const found: Array<{ listen: string[]; handler: CaddyHandler }> = [];
  const walk = (routes: CaddyRoute[] | undefined, listen: string[]) => {
    for (const route of routes ?? []) {
      for (const handler of route.handle ?? []) {
        if (handler.handler === "reverse_proxy") {
          found.push({ listen, handler });
        }
        walk(handler.routes, listen);
      }
    }
  };
  for (const server of Object.values(servers)) {
    walk(server.routes, server.listen);
  }
  return found;
}

const caddySuite = suiteTitle("deploy/Caddyfile", {
  "caddy (Debian package)": hasCaddy,
  "docker-compose (Debian package)": hasCompose,
});
describe.skipIf(caddySuite.skip)(caddySuite.title, () => {
  function caddy(command: "validate" | "adapt") {
    requireTool("caddy", hasCaddy, "caddy");
    const home = temp("caddy-home");
    return spawnSync("caddy", [command, "--config", caddyfile, "--adapter", "caddyfile"], {
      encoding: "utf8",
      env: {
        PATH: process.env.PATH,
        HOME: home,
        XDG_DATA_HOME: home,
        XDG_CONFIG_HOME: home,
        PUBLIC_HOST: REQUIRED.PUBLIC_HOST,
      },
      timeout: 60_000,
    });
  }

  it("passes caddy validate", () => {
    const result = caddy("validate");
    expect(result.stderr).not.toMatch(/"level":"(warn|error)"/);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain("Valid configuration");
  });

  it("balances across exactly the compose file's replicas, on their port, checking /readyz, with no stream timeout", () => {
    const config = resolvedConfig();
    const port = config.services["server-a"]?.environment?.FLEETBACK_LISTEN?.split(":").pop();
    const result = caddy("adapt");
    expect(result.status, result.stderr).toBe(0);
    const proxies = reverseProxies(JSON.parse(result.stdout));
    const toReplicas = proxies.filter(({ handler }) =>
      (handler.upstreams ?? []).some(({ dial }) => dial.startsWith("server-")),
    );
    expect(toReplicas).toHaveLength(1);
    const [{ listen, handler } = { listen: [], handler: { handler: "" } }] = toReplicas;
    expect(listen).toEqual([":443"]);
    expect((handler.upstreams ?? []).map(({ dial }) => dial).sort()).toEqual(
      replicas(config).map((name) => `${name}:${port}`),
    );
    const health = handler.health_checks?.active;
    expect(health?.uri ?? health?.path).toBe("/readyz");
    expect(handler.load_balancing?.selection_policy?.policy).toBe("least_conn");
    expect(handler.stream_timeout).toBeUndefined();

    // Hosts reach the append-only rest-server on :8000; the full one is never published.
    const toRestServer = proxies.filter(({ handler }) =>
      (handler.upstreams ?? []).some(({ dial }) => dial.startsWith("rest-server-append:")),
    );
    expect(toRestServer.map(({ listen }) => listen)).toEqual([[":8000"]]);
    expect(
      proxies.some(({ handler }) =>
        (handler.upstreams ?? []).some(({ dial }) => dial.startsWith("rest-server:")),
      ),
    ).toBe(false);
  });
});

describe("Dockerfile", () => {
  const text = readFileSync(join(repoRoot, "Dockerfile"), "utf8");
  /** Instructions with continuation lines joined and comments dropped. */
  const instructions = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [keyword = "", ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(" ") };
    });
  const froms = instructions.flatMap((instruction, index) => (instruction.keyword === "FROM" ? [index] : []));
  const finalStage = instructions.slice(froms.at(-1) ?? 0);

  it("is multi-stage, its final stage node 20 slim (or distroless) copying from the build stage", () => {
    expect(froms.length).toBeGreaterThanOrEqual(2);
    expect(finalStage[0]?.args).toMatch(
      /^(node:20(\.\d+)*-([a-z]+-)?slim|gcr\.io\/distroless\/nodejs20\S*)(\s|$)/,
    );
    const buildStage = /\bAS\s+(\S+)/i.exec(instructions[froms[0] ?? 0]?.args ?? "")?.[1];
    expect(buildStage).toBeDefined();
    expect(
      finalStage.some(({ keyword, args }) => keyword === "COPY" && args.includes(`--from=${buildStage}`)),
    ).toBe(true);
  });

  it("runs as a non-root user, exposes the listen port and checks /readyz", () => {
    const users = finalStage.filter(({ keyword }) => keyword === "USER").map(({ args }) => args);
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
    const env = finalStage
      .filter(({ keyword }) => keyword === "ENV")
      .map(({ args }) => args)
      .join(" ");
    const port = /FLEETBACK_LISTEN=\S*:(\d+)/.exec(env)?.[1];
    expect(port).toBeDefined();
    expect(
      finalStage.some(({ keyword, args }) => keyword === "EXPOSE" && args.split(/\s+/).includes(port ?? "")),
    ).toBe(true);
    const healthcheck = finalStage.find(({ keyword }) => keyword === "HEALTHCHECK")?.args ?? "";
    expect(healthcheck).toContain(`127.0.0.1:${port}/readyz`);
    expect(finalStage.find(({ keyword }) => keyword === "CMD")?.args).toMatch(/dist\/main\.js/);
  });

  it("starts node with the options pnpm start gives it", () => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
      scripts: { start: string };
    };
    const startOptions = /\bnode((?:\s+--\S+)+)\s+packages\/server\//
      .exec(manifest.scripts.start)?.[1]
      ?.trim();
    // An idle server on PGlite ~25 MiB lower (issue 19, B8); ~55 MiB less with 1,000 agents (B2).
    expect(startOptions).toContain("--v8-pool-size=1");
    expect(startOptions).toContain("--max-semi-space-size=4");
    const cmd = JSON.parse(finalStage.find(({ keyword }) => keyword === "CMD")?.args ?? "[]") as string[];
    expect(cmd.slice(1, -1).join(" ")).toBe(startOptions);
  });

  it("builds with the pnpm of package.json, and .dockerignore keeps local state out of the context", () => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
      packageManager: string;
    };
    const pnpm = manifest.packageManager.replace(/^pnpm@/, "");
    const runs = instructions.filter(({ keyword }) => keyword === "RUN").map(({ args }) => args);
    expect(runs.every((run) => !/\bpnpm@/.test(run) || run.includes(`pnpm@${pnpm}`))).toBe(true);
    expect(runs.some((run) => run.includes(`pnpm@${pnpm}`))).toBe(true);
    const ignored = readFileSync(join(repoRoot, ".dockerignore"), "utf8")
      .split("\n")
      .map((line) =>
        line
          .trim()
          .replace(/^\*\*\//, "")
          .replace(/^\//, ""),
      );
    // secrets/: the compose secret files deploy/make-secrets.sh writes (issue 34).
    for (const entry of ["node_modules", ".cache", "data", "dist", ".turbo", ".git", "secrets"]) {
      expect(ignored, entry).toContain(entry);
    }
  });
});

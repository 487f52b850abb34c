/**
 * The server as docker-compose.yml runs it: its secrets in files (`<NAME>_FILE`, as compose
 * `secrets:` mount them under /run/secrets) and none in its environment. The real executable
 * starts on PostgreSQL through DATABASE_URL_FILE, creates the first admin with the file's
 * bootstrap token, lets Prometheus in with the file's metrics token, and prints none of the three;
 * a setting given both ways stops it with one line naming both.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createPostgresDatabase, type TestPostgres } from "./support/postgres.js";
import {
  makeDataDir,
  runServerToExit,
  type ServerProcess,
  startServerProcess,
} from "./support/server-process.js";
import { missingNote } from "./support/tools.js";

const BOOTSTRAP = "Canary-Bootstrap-From-File-0123";
const METRICS = "Canary-Metrics-From-File-0123";

let secrets: string;
beforeAll(async () => {
  secrets = await mkdtemp(join(tmpdir(), "fleetback-secrets-"));
});
afterAll(async () => {
  await rm(secrets, { recursive: true, force: true });
});

const running: ServerProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop("SIGKILL")));
});

/** A secret file as `echo value > file` writes it: one trailing newline. */
async function secretFile(name: string, value: string): Promise<string> {
  const path = join(secrets, name);
  await writeFile(path, `${value}\n`, { mode: 0o600 });
  return path;
}

describe("start-up refusals of secret files", () => {
  it("refuses a secret given both in the environment and as a file, naming both and neither value", async () => {
    const result = await runServerToExit({
      FLEETBACK_LISTEN: "127.0.0.1:0",
      FLEETBACK_DATA_DIR: await makeDataDir(),
      FLEETBACK_BOOTSTRAP_TOKEN: BOOTSTRAP,
      FLEETBACK_BOOTSTRAP_TOKEN_FILE: await secretFile("bootstrap-both", BOOTSTRAP),
    });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toEqual([
      "fleetback: invalid configuration: FLEETBACK_BOOTSTRAP_TOKEN and FLEETBACK_BOOTSTRAP_TOKEN_FILE: set one, not both (both are set)",
    ]);
    expect(result.stdout + result.stderr).not.toContain("Canary");
  });

  it("names a secret file it cannot read, with its path", async () => {
    const absent = join(secrets, "metrics-absent");
    const result = await runServerToExit({
      FLEETBACK_LISTEN: "127.0.0.1:0",
      FLEETBACK_DATA_DIR: await makeDataDir(),
      FLEETBACK_METRICS_TOKEN_FILE: absent,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `fleetback: invalid configuration: FLEETBACK_METRICS_TOKEN_FILE: cannot read ${absent} (ENOENT)\n`,
    );
  });
});

const pgUrl = process.env.TEST_DATABASE_URL;
const missing = missingNote({ "PostgreSQL (TEST_DATABASE_URL)": pgUrl !== undefined && pgUrl !== "" });
describe.skipIf(missing !== "")(`secrets from files on PostgreSQL${missing}`, () => {
  let pg: TestPostgres;
  beforeAll(async () => {
    pg = await createPostgresDatabase(pgUrl ?? "");
  });
  afterAll(async () => {
    await pg?.drop();
  });

  it("reads the database URL, the bootstrap token and the metrics token from files and prints none of them", async () => {
    const server = await startServerProcess({
      DATABASE_URL_FILE: await secretFile("database-url", pg.url),
      FLEETBACK_BOOTSTRAP_TOKEN_FILE: await secretFile("bootstrap-token", BOOTSTRAP),
      FLEETBACK_METRICS_TOKEN_FILE: await secretFile("metrics-token", METRICS),
    });
    running.push(server);
    const ready = await fetch(`${server.url}/readyz`);
    expect(await ready.json()).toMatchObject({ status: "ready", database: "postgres" });

    // The link names the setting; the operator has the token in the secret file.
    expect(server.output()).toContain(`${server.url}/bootstrap?token=<FLEETBACK_BOOTSTRAP_TOKEN>`);
    const created = await fetch(`${server.url}/api/auth/bootstrap`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        bootstrap_token: BOOTSTRAP,
        username: "admin",
        password: "a long enough password",
      }),
    });
    expect(created.status).toBe(201);

    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    const scraped = await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS}` } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain("fleetback_hosts");

    await server.stop("SIGTERM");
    for (const value of [BOOTSTRAP, METRICS, pg.url]) {
      expect(server.output()).not.toContain(value);
    }
  });
});

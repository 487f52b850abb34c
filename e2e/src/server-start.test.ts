/**
 * The README's first command, as an operator meets it: the built server starts on the embedded
 * database in a data dir, answers /healthz and /readyz, stops cleanly on SIGTERM, and refuses to
 * start with one clear line when its configuration, key file or database is wrong.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import postgres from "postgres";
import { afterEach, describe, expect, it } from "vitest";
import {
  makeDataDir,
  runServerToExit,
  type ServerProcess,
  startServerProcess,
} from "./support/server-process.js";
import { missingNote } from "./support/tools.js";

const running: ServerProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop("SIGKILL")));
});

async function start(env: Record<string, string> = {}): Promise<ServerProcess> {
  const server = await startServerProcess(env);
  running.push(server);
  return server;
}

function expectOneCleanLine(stderr: string): void {
  const lines = stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^fleetback: /);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe("server start on the embedded database", () => {
  it("serves /healthz and /readyz, keeps its key file, and stops on SIGTERM", async () => {
    const server = await start();
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: "ready", database: "pglite" });

    const keyFile = join(server.dataDir, "secret.key");
    const key = await readFile(keyFile);
    expect(key).toHaveLength(32);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect(await server.stop("SIGTERM")).toBe(0);

    const again = await start({ FLEETBACK_DATA_DIR: server.dataDir });
    expect((await fetch(`${again.url}/readyz`)).status).toBe(200);
    expect(await readFile(keyFile)).toEqual(key);
  });

  it("prints a one-time bootstrap link that creates the first admin, and no link once one exists", async () => {
    const server = await start();
    const link = /(http\S+\/bootstrap\?token=(\S+))/.exec(server.output());
    expect(link?.[1]).toBeDefined();
    const token = decodeURIComponent(link?.[2] ?? "");
    const page = await fetch(link?.[1] ?? "");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`value="${token}"`);
    const created = await fetch(`${server.url}/api/auth/bootstrap`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ bootstrap_token: token, username: "admin", password: "a long enough password" }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("set-cookie")).toMatch(/fleetback_session=.*HttpOnly/i);
    expect(server.output()).not.toMatch(/"bootstrap_token"|a long enough password/);
    await server.stop("SIGTERM");
    const again = await start({ FLEETBACK_DATA_DIR: server.dataDir });
    expect(again.output()).not.toContain("/bootstrap?token=");
    const login = await fetch(`${again.url}/api/auth/login`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ username: "admin", password: "a long enough password" }),
    });
    expect(login.status).toBe(200);
  });

  it("sends security headers and answers unknown API paths with JSON", async () => {
    const server = await start();
    const res = await fetch(`${server.url}/api/nothing-here`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: "not_found" });
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });
});

describe("start-up refusals", () => {
  it("names a bad FLEETBACK_LISTEN in one line and exits non-zero", async () => {
    const result = await runServerToExit({
      FLEETBACK_LISTEN: "not-an-address",
      FLEETBACK_DATA_DIR: await makeDataDir(),
    });
    expect(result.code).not.toBe(0);
    expectOneCleanLine(result.stderr);
    expect(result.stderr).toContain("FLEETBACK_LISTEN");
  });

  it("names an unreachable DATABASE_URL without its password", async () => {
    const result = await runServerToExit({
      FLEETBACK_LISTEN: "127.0.0.1:0",
      FLEETBACK_DATA_DIR: await makeDataDir(),
      DATABASE_URL: "postgres://fleet:CanaryDbPassw0rd@127.0.0.1:1/fleetback",
    });
    expect(result.code).not.toBe(0);
    expectOneCleanLine(result.stderr);
    expect(result.stderr).toContain("127.0.0.1:1");
    expect(result.stderr + result.stdout).not.toContain("CanaryDbPassw0rd");
  });

  it("refuses a key file of the wrong size, names the file and leaves it untouched", async () => {
    const dataDir = await makeDataDir();
    await mkdir(dataDir, { recursive: true });
    const keyFile = join(dataDir, "secret.key");
    const wrong = randomBytes(17);
    await writeFile(keyFile, wrong, { mode: 0o600 });
    const result = await runServerToExit({ FLEETBACK_LISTEN: "127.0.0.1:0", FLEETBACK_DATA_DIR: dataDir });
    expect(result.code).not.toBe(0);
    expectOneCleanLine(result.stderr);
    expect(result.stderr).toContain(keyFile);
    expect(await readFile(keyFile)).toEqual(wrong);
  });
});

const pgUrl = process.env.TEST_DATABASE_URL;
const missing = missingNote({ "PostgreSQL (TEST_DATABASE_URL)": pgUrl !== undefined && pgUrl !== "" });
describe.skipIf(missing !== "")(`server start on PostgreSQL${missing}`, () => {
  it("migrates a fresh database and reports ready", async () => {
    const admin = postgres(pgUrl ?? "", { max: 1, onnotice: () => undefined });
    const name = `fleetback_e2e_${Date.now()}_${randomBytes(3).toString("hex")}`;
    await admin.unsafe(`CREATE DATABASE ${name}`);
    try {
      const url = new URL(pgUrl ?? "");
      url.pathname = `/${name}`;
      const server = await start({ DATABASE_URL: url.toString() });
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: "ready", database: "postgres" });
      await server.stop("SIGTERM");
    } finally {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});

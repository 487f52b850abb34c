import { Worker } from "node:worker_threads";
import { auditLog } from "@fleetback/db";
import { eq } from "drizzle-orm";
import type { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AppEnv } from "../auth/actor.js";
import type { Config } from "../config.js";
import { startSignedInApp, TEST_PASSWORD } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps | undefined;
afterEach(async () => {
  await deps?.close();
  deps = undefined;
});

/** An app with one admin, and a way to post as if from a given peer socket address. */
async function setUp(config: Partial<Config> = {}) {
  const started = await startSignedInApp({ deps: { config } });
  deps = started.deps;
  const { app } = started;
  const origin = new URL(deps.config.baseUrl).origin;
  const post = async (app: Hono<AppEnv>, peer: string, path: string, body: unknown, headers = {}) =>
    app.request(
      path,
      {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: origin, ...headers },
        body: JSON.stringify(body),
      },
      { incoming: { socket: { remoteAddress: peer } } },
    );
  const login = (peer: string, password: string, headers: Record<string, string> = {}) =>
    post(app, peer, "/api/auth/login", { username: "admin", password }, headers);
  return { app, login };
}

async function loginAuditIps(): Promise<(string | null)[]> {
  const rows = await deps?.db.select().from(auditLog).where(eq(auditLog.action, "auth.login"));
  return (rows ?? []).map((row) => row.ip);
}

describe("sign-in limits", () => {
  it("an attacker's wrong passwords from one address do not lock the user out elsewhere", async () => {
    const { login } = await setUp();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      statuses.push((await login("203.0.113.5", `wrong-${i}`)).status);
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
    // The attacker's address stays limited, even with the right password...
    expect((await login("203.0.113.5", TEST_PASSWORD)).status).toBe(429);
    // ...but the user at their own address signs in.
    expect((await login("198.51.100.7", TEST_PASSWORD)).status).toBe(200);
    // A dozen argon2 hashes at production cost: seconds each on a busy CI machine.
  }, 120_000);

  it("counts an IPv6 /64 as one address, and IPv4 (mapped or not) per address", async () => {
    const { login } = await setUp();
    // Ten wrong passwords, each from a fresh address of one /64, as one site can pick them.
    for (let i = 1; i <= 10; i++) {
      expect((await login(`2001:db8:1:2::${i.toString(16)}`, `wrong-${i}`)).status).toBe(401);
    }
    expect((await login("2001:db8:1:2:ffff::1", TEST_PASSWORD)).status).toBe(429);
    expect((await login("2001:db8:1:3::1", TEST_PASSWORD)).status).toBe(200);
    for (let i = 0; i < 10; i++) {
      expect((await login("::ffff:203.0.113.5", `wrong-${i}`)).status).toBe(401);
    }
    // The mapped form and the plain form are one address; its neighbour is another.
    expect((await login("203.0.113.5", TEST_PASSWORD)).status).toBe(429);
    expect((await login("203.0.113.6", TEST_PASSWORD)).status).toBe(200);
  }, 120_000);

  it("audits a failed sign-in with the address and a known user, never the typed password or name", async () => {
    const { app, login } = await setUp();
    expect((await login("203.0.113.9", "hunter2-typed")).status).toBe(401);
    const origin = new URL(deps?.config.baseUrl ?? "").origin;
    const unknown = await app.request(
      "/api/auth/login",
      {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: origin },
        body: JSON.stringify({ username: "my-secret-pass", password: "x" }),
      },
      { incoming: { socket: { remoteAddress: "203.0.113.10" } } },
    );
    expect(unknown.status).toBe(401);
    const rows =
      (await deps?.db.select().from(auditLog).where(eq(auditLog.action, "auth.login_failed"))) ?? [];
    expect(rows).toHaveLength(2);
    const admin = rows.find((row) => row.ip === "203.0.113.9");
    expect(admin).toMatchObject({ actorKind: "system", targetKind: "user", details: { known_user: true } });
    expect(admin?.targetId).toBeTruthy();
    const stranger = rows.find((row) => row.ip === "203.0.113.10");
    expect(stranger).toMatchObject({ targetKind: null, targetId: null, details: { known_user: false } });
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain("hunter2-typed");
    expect(stored).not.toContain("my-secret-pass");
  }, 60_000);

  it("ignores a spoofed X-Forwarded-For when no proxy is trusted", async () => {
    const { login } = await setUp();
    expect((await login("198.51.100.7", TEST_PASSWORD, { "X-Forwarded-For": "192.0.2.1" })).status).toBe(200);
    expect(await loginAuditIps()).toEqual(["198.51.100.7"]);
  });

  it("uses the forwarded address only from a trusted proxy", async () => {
    const { login } = await setUp({ trustedProxies: ["10.0.0.0/8"] });
    const viaProxy = await login("10.0.0.2", TEST_PASSWORD, { "X-Forwarded-For": "198.51.100.7, 10.0.0.9" });
    expect(viaProxy.status).toBe(200);
    const direct = await login("203.0.113.5", TEST_PASSWORD, { "X-Forwarded-For": "192.0.2.1" });
    expect(direct.status).toBe(200);
    expect(await loginAuditIps()).toEqual(["198.51.100.7", "203.0.113.5"]);
  });
});

describe("password hashing", () => {
  it("leaves the event loop free while logins hash, so /healthz answers before they finish", async () => {
    const { app, login } = await setUp();
    // The first hash handed to the argon2 pool's worker is held there until /healthz has answered:
    // the order below then follows from the code, not from how long a hash takes on this machine.
    // A hash made on this thread would never be handed over, and the race below says so.
    const postMessage = Worker.prototype.postMessage;
    const held: Array<() => void> = [];
    let handedOver: () => void = () => undefined;
    const firstHandOver = new Promise<void>((resolve) => {
      handedOver = resolve;
    });
    const hold = vi.spyOn(Worker.prototype, "postMessage").mockImplementation(function (
      this: Worker,
      ...args: Parameters<Worker["postMessage"]>
    ) {
      held.push(() => postMessage.apply(this, args));
      handedOver();
    });
    try {
      const order: string[] = [];
      const logins = ["203.0.113.1", "203.0.113.2", "203.0.113.3"].map((peer) =>
        login(peer, "wrong password").then((res) => {
          order.push(`login ${res.status}`);
        }),
      );
      await Promise.race([
        firstHandOver,
        Promise.all(logins).then(() => {
          throw new Error("the logins hashed without handing a hash to a worker thread");
        }),
      ]);
      const health = await app.request("/healthz");
      order.push(`healthz ${health.status}`);
      hold.mockRestore();
      for (const send of held.splice(0)) {
        send();
      }
      await Promise.all(logins);
      expect(order).toEqual(["healthz 200", "login 401", "login 401", "login 401"]);
    } finally {
      hold.mockRestore();
    }
  });
});

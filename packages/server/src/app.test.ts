import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "./app.js";
import { RequestError } from "./errors.js";
import { createTestDeps, type TestDeps } from "./testing/test-deps.js";

let deps: TestDeps;
beforeAll(async () => {
  deps = await createTestDeps();
});
afterAll(async () => {
  await deps.close();
});

function makeApp(ready: boolean) {
  const app = createApp({
    ...deps,
    readiness: {
      check: async () => {
        if (!ready) {
          throw new Error("connection refused");
        }
        return { database: "pglite" };
      },
    },
  });
  return { app, lines: deps.logLines };
}

describe("health routes", () => {
  it("answers /healthz", async () => {
    const { app } = makeApp(true);
    const res = await app.request("/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("answers /readyz 200 when the database answers and 503 when it does not", async () => {
    expect((await makeApp(true).app.request("/readyz")).status).toBe(200);
    const down = await makeApp(false).app.request("/readyz");
    expect(down.status).toBe(503);
    expect(JSON.stringify(await down.json())).not.toContain("connection refused");
  });
});

describe("error mapping", () => {
  function withRoutes() {
    const made = makeApp(true);
    const extra = new Hono();
    extra.post("/api/thing", () => {
      throw new RequestError("invalid", "name: must not be empty", { details: { field: "name" } });
    });
    extra.get("/api/boom", () => {
      throw new Error("secret internal detail");
    });
    made.app.route("/", extra);
    return made;
  }

  it("turns a typed error into JSON naming the field, with a request id", async () => {
    const { app } = withRoutes();
    const res = await app.request("/api/thing", { method: "POST" });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      code: "invalid",
      message: "name: must not be empty",
      details: { field: "name" },
    });
    expect(body.request_id).toBe(res.headers.get("x-request-id"));
  });

  it("turns a typed error into a toast for htmx posts", async () => {
    const { app } = withRoutes();
    const res = await app.request("/api/thing", { method: "POST", headers: { "HX-Request": "true" } });
    expect(res.status).toBe(400);
    expect(await res.text()).toBe("name: must not be empty");
    expect(res.headers.get("hx-reswap")).toBe("none");
  });

  it("never echoes an internal message in a 500, but logs it", async () => {
    const { app, lines } = withRoutes();
    const res = await app.request("/api/boom");
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain("secret internal detail");
    expect(lines.join("\n")).toContain("secret internal detail");
  });
});

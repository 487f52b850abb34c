/**
 * The OpenAPI document of /api (issue 18.2): valid OpenAPI 3.1 by the official schema; every /api
 * route of the app's route table documented with its method and access, and nothing documented
 * that no route answers; and the answers real routes give on a seeded app match the documented
 * schemas (testing/documented-answers.ts, strict: an undocumented field fails too). Then /api/docs
 * renders it all without script. The answers of the hosts' own routes are in
 * openapi-routes-hosts.test.ts, those of fleet-wide routes in openapi-routes-fleet.test.ts. Every
 * operation must have been answered successfully at least once by the file whose share holds its
 * route module (testing/openapi-route-shares.ts), so a new route without a call fails a last test.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import type { Hono } from "hono";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { API_OPERATIONS } from "../api-operations.js";
import type { AppEnv, Role } from "../auth/actor.js";
import { createAnswerChecker } from "../testing/documented-answers.js";
import { createTestClient, type TestClient } from "../testing/http.js";
import type { HttpReceiver } from "../testing/http-receiver.js";
import { shareProblems, unansweredInShare } from "../testing/openapi-route-shares.js";
import { PASSWORD, useSeededApi } from "../testing/seeded-api.js";
import type { TestDeps } from "../testing/test-deps.js";
import { createSchemaCollector } from "./json-schema.js";

let deps: TestDeps;
let app: Hono<AppEnv>;
let admin: TestClient;
let receiver: HttpReceiver;
const { checker, call } = useSeededApi((api) => {
  ({ deps, app, admin, receiver } = api);
});

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1 by the official schema, with unique operation ids", async () => {
    const { status, body } = await call(admin, "GET", "/api/openapi.json");
    expect(status).toBe(200);
    const validator = new Validator();
    const result = await validator.validate(body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    const ids = API_OPERATIONS.map((op) => op.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Every $ref names a component the document holds.
    const refs = [...JSON.stringify(body).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map(
      (m) => m[1],
    );
    expect(refs.length).toBeGreaterThan(20);
    for (const name of refs) {
      expect(body.components.schemas[name as string], name).toBeDefined();
    }
    expect(body.servers).toEqual([{ url: deps.config.baseUrl }]);
  });

  it("documents exactly the /api routes of the route table, with their methods and access", () => {
    const table = new Map<string, Role | "public">();
    for (const route of app.routes) {
      if (route.method === "ALL" || !route.path.startsWith("/api/")) {
        continue;
      }
      const key = `${route.method} ${route.path}`;
      const marker = (route.handler as { requiredRole?: Role }).requiredRole;
      if (marker) {
        table.set(key, marker);
      } else if (!table.has(key)) {
        table.set(key, "public");
      }
    }
    const documented = new Map(
      API_OPERATIONS.map((op) => [
        `${op.method.toUpperCase()} ${op.path}`,
        // An agent route has no role: its handler checks the agent's own token.
        op.access === "agent" ? "public" : op.access,
      ]),
    );
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(table));
  });

  it("turns TypeBox schemas into plain JSON Schema and names the ones with an $id", () => {
    const Named = Type.Object({ a: Type.String() }, { $id: "Named" });
    const collector = createSchemaCollector();
    const json = collector.toJson(Type.Object({ one: Named, two: Type.Optional(Named) }));
    expect(json).toEqual({
      type: "object",
      required: ["one"],
      properties: {
        one: { $ref: "#/components/schemas/Named" },
        two: { $ref: "#/components/schemas/Named" },
      },
    });
    expect(collector.components).toEqual({
      Named: { type: "object", required: ["a"], properties: { a: { type: "string" } } },
    });
    expect(() => collector.toJson(Type.Object({ b: Type.Number() }, { $id: "Named" }))).toThrow(
      /two different/,
    );
  });

  it("the answer check refuses a status, a field or a type the document does not have", async () => {
    const job = { job_id: "01JD0000000000000000000000" };
    const answer = (status: number, body: unknown) =>
      new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
    const strict = createAnswerChecker();
    await expect(strict.check("POST", `/api/hosts/x/diff`, answer(201, job))).resolves.toEqual(job);
    await expect(strict.check("POST", `/api/hosts/x/diff`, answer(200, job))).rejects.toThrow(
      /does not document/,
    );
    await expect(
      strict.check("POST", `/api/hosts/x/diff`, answer(201, { ...job, extra: 1 })),
    ).rejects.toThrow(/refuses/);
    await expect(strict.check("POST", `/api/hosts/x/diff`, answer(201, { job_id: 7 }))).rejects.toThrow(
      /refuses/,
    );
    await expect(strict.check("GET", `/api/nothing`, answer(200, {}))).rejects.toThrow(
      /no documented operation/,
    );
  });
});

describe("answers match their documented schemas", () => {
  it("signing in, users and API tokens", async () => {
    expect((await call(admin, "GET", "/api/auth/me")).status).toBe(200);
    const created = await call(admin, "POST", "/api/users", {
      username: "vera",
      password: PASSWORD,
      role: "viewer",
    });
    expect(created.status).toBe(201);
    const userId = created.body.user.id;
    expect(
      (await call(admin, "POST", "/api/users", { username: "vera", password: PASSWORD, role: "viewer" }))
        .status,
    ).toBe(409);
    expect((await call(admin, "PUT", `/api/users/${userId}`, { role: "operator" })).status).toBe(200);
    expect(
      (await call(admin, "POST", `/api/users/${userId}/password`, { password: `${PASSWORD}!` })).status,
    ).toBe(204);
    expect((await call(admin, "GET", "/api/users")).status).toBe(200);

    const vera = createTestClient(app, deps.config.baseUrl);
    expect(
      (await call(vera, "POST", "/api/auth/login", { username: "vera", password: "wrong" })).status,
    ).toBe(401);
    expect(
      (await call(vera, "POST", "/api/auth/login", { username: "vera", password: `${PASSWORD}!` })).status,
    ).toBe(200);
    expect(
      (
        await call(vera, "PUT", "/api/auth/me/password", {
          current_password: `${PASSWORD}!`,
          new_password: PASSWORD,
        })
      ).status,
    ).toBe(204);
    expect((await call(vera, "GET", "/api/users")).status).toBe(403);
    expect((await call(vera, "POST", "/api/auth/logout")).status).toBe(204);
    expect((await call(vera, "GET", "/api/auth/me")).status).toBe(401);
    expect((await call(admin, "DELETE", `/api/users/${userId}`)).status).toBe(204);

    const token = await call(admin, "POST", "/api/api-tokens", {
      name: "report script",
      expires_at: "2027-01-31",
    });
    expect(token.status).toBe(201);
    const bearer = createTestClient(app, deps.config.baseUrl);
    const me = await bearer.request("/api/auth/me", {
      headers: { Authorization: `Bearer ${token.body.token}` },
    });
    expect(await checker.check("GET", "/api/auth/me", me)).toMatchObject({ user: { username: "admin" } });
    expect((await call(admin, "GET", "/api/api-tokens")).body.api_tokens).toHaveLength(1);
    expect((await call(admin, "DELETE", `/api/api-tokens/${token.body.api_token.id}`)).status).toBe(204);
    expect(
      (
        await call(admin, "POST", "/api/auth/bootstrap", {
          bootstrap_token: "x",
          username: "y",
          password: "z",
        })
      ).status,
    ).toBe(401);
  });

  it("notification channels", async () => {
    const created = await call(admin, "POST", "/api/notification-channels", {
      name: "ops hook",
      kind: "webhook",
      config: { url: `${receiver.url}/hook`, secret: "0123456789abcdef0123" },
    });
    expect(created.status).toBe(201);
    const id = created.body.notification_channel.id;
    expect((await call(admin, "POST", `/api/notification-channels/${id}/test`)).body.result.status).toBe(
      "sent",
    );
    expect((await call(admin, "GET", `/api/notification-channels/${id}`)).body.recent_attempts).toHaveLength(
      1,
    );
    expect(
      (await call(admin, "PUT", `/api/notification-channels/${id}`, { notify_resolved: true })).status,
    ).toBe(200);
    expect((await call(admin, "GET", "/api/notification-channels")).body.notification_channels).toHaveLength(
      1,
    );
    expect(
      (await call(admin, "POST", "/api/notification-channels", { name: "x", kind: "pager" })).status,
    ).toBe(400);
    expect((await call(admin, "DELETE", `/api/notification-channels/${id}`)).status).toBe(204);
    expect((await call(admin, "GET", `/api/notification-channels/${id}`)).status).toBe(404);
  });
});

describe("/api/docs", () => {
  it("lists every operation and schema with no script of its own and no inline style", async () => {
    const res = await admin.request("/api/docs");
    const html = (await checker.check("GET", "/api/docs", res)) as string;
    expect(res.headers.get("Content-Security-Policy")).toContain("script-src 'self'");
    expect(html.match(/data-testid="operation"/g)).toHaveLength(API_OPERATIONS.length);
    for (const op of API_OPERATIONS) {
      expect(html).toContain(`id="op-${op.id}"`);
    }
    expect(html).toContain('<a href="#schema-Job">Job</a>');
    expect(html).toContain('id="schema-Job"');
    expect(html).not.toMatch(/\sstyle=/);
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    for (const [, attrs, body] of scripts) {
      expect(body).toBe("");
      expect(attrs).toMatch(/src="\/static\//);
    }
    expect((await createTestClient(app, deps.config.baseUrl).request("/api/docs")).status).toBe(401);
  });

  it("prints a schema one field a line, its comment set apart, so no comment runs into the next field", async () => {
    const html = await (await admin.request("/api/docs")).text();
    const job = /id="schema-Job">Job<\/h3>\s*<pre[^>]*>([\s\S]*?)<\/pre>/.exec(html)?.[1] ?? "";
    const lines = job.split("\n").filter((line) => line !== "");
    expect(lines.length).toBeGreaterThan(5);
    expect(lines[0]).toBe("{");
    expect(lines.at(-1)).toBe("}");
    for (const line of lines.slice(1, -1)) {
      expect(line).toMatch(/^ {2}/);
    }
    // A "//" only in a note, which ends its line.
    expect(job.replace(/<span class="schema-note">[^<\n]*<\/span>$/gm, "")).not.toContain("//");
    expect(job).toContain('<span class="schema-note">');
  });
});

describe("coverage", () => {
  it("every operation is in one file's share, and this file's share was answered successfully above", () => {
    expect(shareProblems()).toEqual([]);
    expect(unansweredInShare(checker, "openapi-routes.test.ts")).toEqual([]);
  });
});

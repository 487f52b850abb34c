/**
 * The OpenAPI document of /api (issue 18.2): valid OpenAPI 3.1 by the official schema; every /api
 * route of the app's route table documented with its method and access, and nothing documented
 * that no route answers; and the answers real routes give on a seeded app match the documented
 * schemas (testing/documented-answers.ts, strict: an undocumented field fails too). Every
 * operation must have been answered successfully at least once here, so a new route without a
 * call in this file fails the last test. Then /api/docs renders it all without script.
 */
import { encodePublicKey, generateSigningKeyPair, sign } from "@fleetback/crypto";
import { alerts, jobLogs, repoStats, schedules, sourceGroups } from "@fleetback/db";
import { decodeServerMessage } from "@fleetback/protocol";
import { Validator } from "@seriousme/openapi-schema-validator";
import { eq } from "drizzle-orm";
import type { Hono } from "hono";
import { Type } from "typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { raiseAlert } from "../alerts/alerts.js";
import { API_OPERATIONS } from "../api-operations.js";
import { createApp } from "../app.js";
import { writeAudit } from "../audit/audit.js";
import type { AppEnv, Role } from "../auth/actor.js";
import { applyCatalogPart } from "../catalog/catalog-apply.js";
import { delta, entry, reportSnapshots, seedGroup } from "../catalog/catalog-test-support.js";
import { openHold } from "../holds/deletion-holds.js";
import { HOSTNAME_CHANGED_ACTION } from "../hosts/host-audit.js";
import type { AgentConnection } from "../hub/local-hub.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { createAnswerChecker } from "../testing/documented-answers.js";
import { createTestClient, type TestClient } from "../testing/http.js";
import { type HttpReceiver, startHttpReceiver } from "../testing/http-receiver.js";
import { seedHost, seedJob } from "../testing/seed.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";
import { createSchemaCollector } from "./json-schema.js";

const PASSWORD = "correct horse battery";
const DAY = 86_400_000;
const snapshotId = (n: number) => n.toString(16).padStart(64, "0");

let deps: TestDeps;
let app: Hono<AppEnv>;
let admin: TestClient;
let receiver: HttpReceiver;
const checker = createAnswerChecker();
/** Host online through a connection that answers tree.list; protocol 8 (mirror, forget one). */
let hostId: string;
/** Host with no agent connected. */
let offlineHostId: string;

/** One call, checked against the document; answers the parsed body. */
async function call(
  client: TestClient,
  method: string,
  path: string,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: the body has passed the document's schema; tests read it field by field
): Promise<{ status: number; body: any }> {
  const res = await client.json(method, path, body);
  return { status: res.status, body: await checker.check(method, path, res) };
}

/** An agent that answers each tree.list with two entries, as the wizard's tests' agents do. */
function treeAnsweringAgent(id: string): AgentConnection {
  return {
    hostId: id,
    send(frame) {
      const decoded = decodeServerMessage(frame);
      if (decoded.ok && decoded.message.type === "tree.list") {
        const requestId = decoded.message.id;
        setImmediate(() =>
          deps.hub.deliverReply(id, {
            id: requestId,
            type: "tree.list.result",
            payload: {
              entries: [
                { name: "etc", path: "/srv/etc", type: "dir", size: 0, mtime: "2026-11-20T01:00:00Z" },
                { name: "a.txt", path: "/srv/a.txt", type: "file", size: 12, mtime: "2026-11-20T01:00:00Z" },
              ],
            },
          }),
        );
      }
    },
    close() {},
  };
}

beforeAll(async () => {
  deps = await createTestDeps();
  app = createApp(deps);
  receiver = await startHttpReceiver();
  admin = createTestClient(app, deps.config.baseUrl);
  const boot = await call(admin, "POST", "/api/auth/bootstrap", {
    bootstrap_token: "test-bootstrap-token-0123456789",
    username: "admin",
    password: PASSWORD,
  });
  expect(boot.status).toBe(201);
  const now = deps.clock.now();
  const { host } = await seedHost(deps, {
    protocolVersion: 8,
    reportedHostname: "web-1.example",
    toolVersion: "restic 0.18.0",
    lastSeenAt: now,
    updateVersion: "0.0.10",
    updateState: "failed",
    updateError: "the new agent did not start",
    updateRequestedAt: now,
    updateStateAt: now,
    refusedProtocolVersion: 1,
    refusedAt: now,
  });
  hostId = host.id;
  deps.hub.register(treeAnsweringAgent(hostId));
  offlineHostId = (await seedHost(deps, { name: "db-1", protocolVersion: 8 })).host.id;
  await replaceSnapshots(deps.db, hostId, {
    refreshed_at: "2026-11-21T11:00:00Z",
    snapshots: [2, 1].map((n) => ({
      id: snapshotId(n),
      short_id: snapshotId(n).slice(-8),
      time: `2026-11-1${n}T03:00:00Z`,
      hostname: "web-1",
      paths: ["/srv"],
      tags: ["srv"],
      size_bytes: 1024 * n,
      file_count: 10 * n,
    })),
  });
  await writeAudit(deps.db, deps, {
    actor: "agent",
    action: HOSTNAME_CHANGED_ACTION,
    targetKind: "host",
    targetId: hostId,
    details: { from: "web-1", to: "web-1.example" },
  });
  await seedJob(
    deps,
    { hostId, kind: "drill", actorKind: "system", params: { snapshot_id: snapshotId(2) } },
    {
      status: "succeeded",
      finishedAt: now,
      summary: {
        snapshot_id: snapshotId(2),
        files_in_snapshot: 20,
        files_checked: 2,
        bytes_checked: 24,
        mismatch_count: 1,
        mismatches: [{ path: "/srv/a.txt", expected_size: 12, restored_size: null }],
      },
    },
  );
  await seedJob(
    deps,
    { hostId, kind: "copy", actorKind: "system" },
    {
      status: "succeeded",
      finishedAt: now,
      summary: {
        initialised: false,
        requested: 2,
        mirrored: 2,
        missing: [],
        mirror_snapshot_count: 2,
        mirror_latest_time: "2026-11-21T03:00:00Z",
      },
    },
  );
  await deps.db.insert(repoStats).values({
    hostId,
    lastCheckStatus: "ok",
    lastCheckAt: now,
    lastCheckOkAt: now,
    totalSizeBytes: 4096,
    rawSizeBytes: 2048,
    totalFileCount: 30,
    snapshotCount: 2,
    compressionRatio: 2,
  });
});

afterAll(async () => {
  await receiver?.close();
  await deps?.close();
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

  it("source groups, hooks, schedules, maintenance and stats", async () => {
    const base = `/api/hosts/${hostId}`;
    const group = await call(admin, "POST", `${base}/source-groups`, {
      name: "srv",
      includes: ["/srv"],
      excludes: ["*.tmp"],
      retention_policy: { last: 7, within: "30d" },
      pre_hook: "echo before",
      bandwidth_up_kbps: 512,
    });
    expect(group.status).toBe(201);
    const gid = group.body.source_group.id;
    const spare = await call(admin, "POST", `${base}/source-groups`, { name: "etc", includes: ["/srv/etc"] });
    expect(spare.body.source_group.conflict_dimension).toBe("/srv/etc");
    expect((await call(admin, "GET", `${base}/source-groups/${gid}`)).body.source_group.pre_hook).toBe(
      "echo before",
    );
    expect((await call(admin, "PUT", `${base}/source-groups/${gid}`, { grace_seconds: 3600 })).status).toBe(
      200,
    );
    expect((await call(admin, "PUT", `${base}/hooks`, { pre_hook_default: "true" })).status).toBe(200);

    const schedule = await call(admin, "POST", `${base}/schedules`, {
      cron: "0 3 * * *",
      source_group_ids: [gid, spare.body.source_group.id],
    });
    expect(schedule.status).toBe(201);
    const sid = schedule.body.schedule.id;
    expect(
      (
        await call(admin, "PUT", `${base}/schedules/${sid}`, {
          cron: "0 4 * * *",
          source_group_ids: [gid],
          enabled: true,
        })
      ).status,
    ).toBe(200);
    expect((await call(admin, "DELETE", `${base}/source-groups/${gid}`)).status).toBe(409);
    expect((await call(admin, "DELETE", `${base}/source-groups/${spare.body.source_group.id}`)).status).toBe(
      204,
    );
    const second = await call(admin, "POST", `${base}/schedules`, {
      cron: "30 2 * * 1",
      source_group_ids: [gid],
    });
    expect((await call(admin, "DELETE", `${base}/schedules/${second.body.schedule.id}`)).status).toBe(200);
    expect((await call(admin, "GET", `${base}/schedules`)).body.schedules).toHaveLength(1);
    // Scheduled three days ago and never backed up: overdue, so the dashboard has attention rows.
    const past = new Date(deps.clock.now().getTime() - 3 * DAY);
    await deps.db.update(sourceGroups).set({ createdAt: past }).where(eq(sourceGroups.hostId, hostId));
    await deps.db
      .update(schedules)
      .set({ createdAt: past, updatedAt: past })
      .where(eq(schedules.hostId, hostId));
    const groups = await call(admin, "GET", `${base}/source-groups`);
    expect(
      groups.body.source_groups.map((g: { freshness: { state: string } }) => g.freshness.state),
    ).toContain("overdue");

    expect((await call(admin, "GET", `${base}/maintenance`)).body.last_drill.mismatch_count).toBe(1);
    expect(
      (await call(admin, "PUT", `${base}/maintenance`, { check_enabled: false, drill_enabled: true })).status,
    ).toBe(200);
    expect((await call(admin, "GET", `${base}/stats`)).body.stats.stored_size_bytes).toBe(2048);

    const run = await call(admin, "POST", `${base}/source-groups/${gid}/run`, { bandwidth_up_kbps: 128 });
    expect(run.status).toBe(201);
    const offlineGroup = await call(admin, "POST", `/api/hosts/${offlineHostId}/source-groups`, {
      name: "srv",
      includes: ["/srv"],
    });
    const queued = await call(
      admin,
      "POST",
      `/api/hosts/${offlineHostId}/source-groups/${offlineGroup.body.source_group.id}/run`,
    );
    expect(queued.status).toBe(202);
  });

  it("hosts, credentials, caps, manual jobs, the mirror, the dashboard and alerts", async () => {
    const base = `/api/hosts/${hostId}`;
    expect(
      (
        await call(admin, "PUT", `${base}/repo-credentials`, {
          url: "rest:http://127.0.0.1:8000/web-1",
          password: "pw",
        })
      ).body,
    ).toEqual({ pushed: true });
    expect(
      (
        await call(admin, "PUT", `${base}/admin-credentials`, {
          url: "rest:http://127.0.0.1:8000/web-1",
          username: "admin",
          password: "pw",
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call(admin, "PUT", `${base}/mirror-credentials`, {
          url: "rest:http://127.0.0.1:8001/web-1",
          password: "pw",
        })
      ).status,
    ).toBe(200);
    expect((await call(admin, "PUT", `${base}/bandwidth`, { up_kbps: 1024, down_kbps: null })).status).toBe(
      200,
    );
    const kit = await call(admin, "POST", `${base}/recovery-kit`, { password: PASSWORD });
    expect(kit.status).toBe(200);
    expect(kit.body.kit.hosts[0].repositories.map((slot: { slot: string }) => slot.slot)).toEqual([
      "repo",
      "admin",
      "mirror",
    ]);
    expect((await call(admin, "POST", "/api/recovery-kit", { password: PASSWORD })).status).toBe(200);
    expect((await call(admin, "POST", "/api/recovery-kit", { password: "wrong" })).status).toBe(403);
    const keeper = (await seedHost(deps, { name: "store-1", protocolVersion: 12 })).host;
    const kept = await call(admin, "PUT", `${base}/keeper`, { keeper_host_id: keeper.id });
    expect(kept.status).toBe(200);
    expect((await call(admin, "GET", base)).body.host.deletion_protection).toEqual({
      protected: true,
      keeper: { id: keeper.id, name: "store-1" },
      keeps: [],
    });
    expect((await call(admin, "PUT", `${base}/keeper`, { keeper_host_id: null })).status).toBe(200);
    const { hold } = await openHold(
      deps,
      { hostId, kind: "backup_anomaly", reason: "92% of the files changed", details: {} },
      deps.clock.now(),
    );
    expect((await call(admin, "GET", base)).body.host.deletion_holds).toMatchObject([{ id: hold.id }]);
    const released = await call(admin, "POST", `${base}/deletion-holds/${hold.id}/release`, {
      reason: "expected: a new build tree",
    });
    expect(released.status).toBe(200);
    // Deleting a host no longer kept is allowed; the fleet counts below are of two hosts.
    expect((await call(admin, "DELETE", `/api/hosts/${keeper.id}`)).status).toBe(204);
    const host = await call(admin, "GET", base);
    expect(host.body.host).toMatchObject({
      connected: true,
      repository: { state: "bound" },
      mirror: { configured: true, snapshot_count: 2 },
      hostname_changes: [{ from: "web-1", to: "web-1.example" }],
    });
    expect((await call(admin, "GET", `/api/hosts/${offlineHostId}`)).body.host.last_drill).toBeNull();
    // A login of its own, which the offline host's protocol-8 agent is too old to be sent.
    expect(
      (
        await call(admin, "PUT", `/api/hosts/${offlineHostId}/admin-credentials`, {
          url: "rest:http://127.0.0.1:8000/db-1",
          username: "admin",
          password: "pw",
          login_password: "login-pw",
        })
      ).body,
    ).toEqual({ pushed: false });
    expect(
      (await call(admin, "GET", `/api/hosts/${offlineHostId}`)).body.host.admin_credentials,
    ).toMatchObject({
      login_password_set: true,
      withheld_reason: expect.any(String),
    });
    expect(
      (await call(admin, "PUT", `${base}/admin-credentials`, { login_password: "login-pw" })).status,
    ).toBe(409);
    expect((await call(admin, "GET", "/api/hosts?sort=name&limit=10")).body.total).toBe(2);
    expect((await call(admin, "GET", "/api/hosts?sort=sideways")).status).toBe(400);
    expect((await call(admin, "GET", "/api/hosts/01JD0000000000000000000000")).status).toBe(404);

    const check = await call(admin, "POST", `${base}/jobs`, { kind: "check" });
    expect(check.status).toBe(201);
    expect((await call(admin, "POST", `${base}/jobs`, { kind: "check" })).status).toBe(409);
    expect((await call(admin, "POST", `/api/hosts/${offlineHostId}/jobs`, { kind: "unlock" })).status).toBe(
      503,
    );
    expect((await call(admin, "POST", `${base}/mirror/copy`)).status).toBe(201);

    const [group] = await deps.db.select().from(sourceGroups).where(eq(sourceGroups.hostId, hostId));
    const raised = await raiseAlert(
      deps,
      { hostId, kind: "backup_failed", dedupKey: group?.id ?? "" },
      { message: "restic exited 1" },
      deps.clock.now(),
    );
    expect((await call(admin, "GET", "/api/dashboard")).body.attention.length).toBeGreaterThan(0);
    expect((await call(admin, "GET", "/api/alerts?state=open")).body.alerts).toHaveLength(1);
    expect((await call(admin, "POST", `/api/alerts/${raised.alert.id}/resolve`)).status).toBe(200);
    expect((await call(admin, "POST", `/api/alerts/${raised.alert.id}/resolve`)).status).toBe(409);
    expect((await call(admin, "GET", "/api/alerts?state=all&limit=5")).body.alerts[0].state).toBe("resolved");
    await deps.db.delete(alerts).where(eq(alerts.hostId, offlineHostId));
  });

  it("snapshots, the tree, restore, diff and jobs", async () => {
    const base = `/api/hosts/${hostId}`;
    const page = await call(admin, "GET", `${base}/snapshots?limit=1`);
    expect(page.body.next_before).toBeTypeOf("string");
    expect(
      (await call(admin, "GET", `${base}/snapshots?before=${encodeURIComponent(page.body.next_before)}`)).body
        .snapshots,
    ).toHaveLength(1);
    const tree = await call(admin, "GET", `${base}/tree?snapshot_id=${snapshotId(2)}&path=/srv`);
    expect(tree.body.entries).toHaveLength(2);
    expect(
      (await call(admin, "GET", `${base}/tree?snapshot_id=${snapshotId(2)}&path=/srv`)).body.cached,
    ).toBe(true);
    expect(
      (await call(admin, "GET", `/api/hosts/${offlineHostId}/tree?snapshot_id=${snapshotId(2)}&path=/srv`))
        .status,
    ).toBe(400);
    const restore = await call(admin, "POST", `${base}/restore`, {
      snapshot_id: snapshotId(2),
      paths: ["/srv/a.txt"],
      in_place: false,
    });
    expect(restore.status).toBe(201);
    expect(
      (await call(admin, "POST", `${base}/restore`, { snapshot_id: "", paths: [], in_place: false })).status,
    ).toBe(400);
    const recovered = await call(admin, "POST", `${base}/recover`, { in_place: false });
    expect(recovered.status, JSON.stringify(recovered.body)).toBe(201);
    expect(recovered.body.started.length).toBeGreaterThan(0);
    expect(
      (await call(admin, "POST", `${base}/diff`, { snapshot_a: snapshotId(1), snapshot_b: snapshotId(2) }))
        .status,
    ).toBe(201);
    expect(
      (
        await call(admin, "POST", `${base}/snapshots/${snapshotId(1)}/forget`, {
          confirm: snapshotId(1).slice(-8),
        })
      ).status,
    ).toBe(201);

    const job = restore.body.job_id;
    await deps.db.insert(jobLogs).values(
      ["restoring", "done"].map((line, index) => ({
        jobId: job,
        seq: index + 1,
        stream: "stdout" as const,
        line,
        ts: deps.clock.now(),
      })),
    );
    expect((await call(admin, "GET", `/api/jobs/${job}/logs?limit=1`)).body.next_after_seq).toBe(1);
    expect((await call(admin, "GET", `/api/jobs/${job}`)).body.job.kind).toBe("restore");
    expect((await call(admin, "GET", `/api/jobs?host_id=${hostId}&limit=2`)).body.next_before).toBeTypeOf(
      "string",
    );
    expect((await call(admin, "GET", "/api/jobs?status=sideways")).status).toBe(400);
    expect((await call(admin, "POST", `/api/jobs/${job}/cancel`)).status).toBe(202);
    const stranded = await seedJob(deps, { hostId: offlineHostId, kind: "check", actorKind: "user" });
    expect((await call(admin, "POST", `/api/jobs/${stranded.id}/cancel`)).status).toBe(200);
    expect((await call(admin, "POST", `/api/jobs/${stranded.id}/cancel`)).status).toBe(409);
  });

  it("enrolment, announced hosts, the agents' own calls, versions and rollouts", async () => {
    const minted = await call(admin, "POST", "/api/enrollment-tokens", {
      repository: { url: "rest:http://127.0.0.1:8000/new-1", username: "new-1" },
      initial_paths: ["/srv"],
    });
    expect(minted.body.generated_password).toBeTypeOf("string");
    expect(minted.body.generated_login_password).toBeTypeOf("string");
    const spare = await call(admin, "POST", "/api/enrollment-tokens", {});
    expect((await call(admin, "GET", "/api/enrollment-tokens")).body.enrollment_tokens).toHaveLength(2);
    const tokens = (await call(admin, "GET", "/api/enrollment-tokens")).body.enrollment_tokens as Array<{
      id: string;
      has_repository: boolean;
    }>;
    const spareId = tokens.find((t) => !t.has_repository)?.id;
    const successor = await call(admin, "POST", `/api/hosts/${offlineHostId}/successor-token`, {});
    expect(successor.status).toBe(201);
    expect(successor.body.host_id).toBe(offlineHostId);
    const successors = (await call(admin, "GET", "/api/enrollment-tokens")).body.enrollment_tokens as Array<{
      id: string;
      successor_of: string | null;
    }>;
    const successorId = successors.find((t) => t.successor_of === offlineHostId)?.id;
    expect((await call(admin, "DELETE", `/api/enrollment-tokens/${successorId}`)).status).toBe(204);
    expect((await call(admin, "DELETE", `/api/enrollment-tokens/${spareId}`)).status).toBe(204);
    expect(spare.status).toBe(201);

    const agent = createTestClient(app, deps.config.baseUrl);
    const info = { os: "linux", arch: "amd64", agent_version: "0.0.9", tool_version: "restic 0.18.0" };
    const enrolled = await call(agent, "POST", "/api/agents/enroll", {
      token: minted.body.token,
      hostname: "new-1",
      ...info,
    });
    expect(enrolled.status).toBe(201);
    expect(
      (
        await call(agent, "POST", "/api/agents/enroll", {
          token: minted.body.token,
          hostname: "new-1",
          ...info,
        })
      ).status,
    ).toBe(401);
    const keyRes = await agent.request("/api/agents/release-key", {
      headers: { Authorization: `Bearer ${enrolled.body.agent_token}` },
    });
    expect(await checker.check("GET", "/api/agents/release-key", keyRes)).toEqual({
      release_public_key: enrolled.body.release_public_key,
    });
    expect((await call(agent, "GET", "/api/agents/release-key")).status).toBe(401);

    const announce = async (hostname: string) => {
      const keys = generateSigningKeyPair();
      const res = await call(agent, "POST", "/api/agents/announce", {
        hostname,
        ...info,
        public_key: encodePublicKey(keys.publicKey),
      });
      expect(res.status).toBe(201);
      return { id: res.body.pending_id as string, keys };
    };
    const claimBody = (secretKey: Uint8Array, pendingId: string) => {
      const timestamp = deps.clock.now().toISOString();
      const signature = sign(
        secretKey,
        new TextEncoder().encode(`fleetback-claim:${pendingId}:${timestamp}`),
      );
      return { timestamp, signature: Buffer.from(signature).toString("base64") };
    };
    const first = await announce("pending-1");
    const claimPath = `/api/agents/announce/${first.id}/claim`;
    expect((await call(agent, "POST", claimPath, claimBody(first.keys.secretKey, first.id))).status).toBe(
      202,
    );
    expect((await call(admin, "GET", "/api/pending-hosts")).body.pending_hosts).toHaveLength(1);
    expect((await call(admin, "POST", `/api/pending-hosts/${first.id}/approve`)).status).toBe(200);
    expect((await call(agent, "POST", claimPath, claimBody(first.keys.secretKey, first.id))).status).toBe(
      200,
    );
    expect((await call(agent, "POST", claimPath, claimBody(first.keys.secretKey, first.id))).status).toBe(
      410,
    );
    const second = await announce("pending-2");
    expect(
      (await call(admin, "POST", "/api/pending-hosts/reject", { ids: [second.id] })).body.rejected,
    ).toEqual([second.id]);
    const third = await announce("pending-3");
    expect((await call(admin, "DELETE", `/api/pending-hosts/${third.id}`)).status).toBe(204);

    const versions = await call(admin, "GET", "/api/agent-versions");
    expect(versions.body.length).toBeGreaterThan(0);
    expect((await call(admin, "GET", "/api/release-key")).body.public_key).toBe(
      enrolled.body.release_public_key,
    );
    const rollout = await call(admin, "POST", "/api/agent-updates", {
      version: versions.body[0].version,
      host_ids: [hostId, offlineHostId],
    });
    expect(rollout.body.targets.length + rollout.body.skipped.length).toBe(2);
  });

  it("host labels, one host's and many at once", async () => {
    const put = await call(admin, "PUT", `/api/hosts/${offlineHostId}/labels`, { labels: { env: "prod" } });
    expect(put.body).toEqual({ labels: { env: "prod" } });
    const patched = await call(admin, "PATCH", `/api/hosts/${offlineHostId}/labels`, { set: { role: "db" } });
    expect(patched.body).toEqual({ labels: { env: "prod", role: "db" } });
    expect((await call(admin, "GET", `/api/hosts/${offlineHostId}/labels`)).body.labels).toEqual({
      env: "prod",
      role: "db",
    });
    const bulk = await call(admin, "POST", "/api/hosts/labels", { selector: "env=prod", remove: ["role"] });
    expect(bulk.body).toEqual({ matched: 1, changed: 1, not_found: [] });
  });

  it("file search across the fleet, and one path's versions", async () => {
    const { host } = await seedHost(deps, { name: "files-1" });
    await seedGroup(deps.db, host.id);
    await applyCatalogPart(deps.db, host.id, delta(0, { changed: [entry("/etc/ssh/id_rsa", 1600)] }));
    await applyCatalogPart(deps.db, host.id, delta(1, { changed: [entry("/etc/ssh/id_rsa", 1700, 2)] }));
    await reportSnapshots(deps.db, host.id, [0, 1]);
    const found = await call(admin, "GET", `/api/search/files?q=id_rsa&hosts=${host.id}&limit=10`);
    expect(found.body.hits.map((hit: { size: number }) => hit.size)).toEqual([1700, 1600]);
    expect(found.body.more).toBe(false);
    const everywhere = await call(admin, "GET", "/api/search/files?q=*.conf&from=2026-11-01&to=2026-11-30");
    expect(everywhere.body.not_catalogued.map((h: { id: string }) => h.id)).toContain(offlineHostId);
    const versions = await call(admin, "GET", `/api/hosts/${host.id}/file-versions?path=/etc/ssh/id_rsa`);
    expect(versions.body.versions.map((v: { snapshots: unknown[] }) => v.snapshots.length)).toEqual([1, 1]);
    const bad = await call(admin, "GET", "/api/search/files?q=/etc/");
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^q: ends with/);
  });

  it("backup evidence, as JSON and as CSV, and the digest as it would read now", async () => {
    const report = await call(admin, "GET", "/api/reports/evidence?from=2026-11-01&to=2026-11-21");
    expect(report.body.days).toHaveLength(21);
    expect(report.body.hosts.length).toBeGreaterThan(0);
    const csv = await call(
      admin,
      "GET",
      "/api/reports/evidence.csv?from=2026-11-20&to=2026-11-21&groups=etc",
    );
    expect(csv.body).toMatch(/^day,host,host_id,deleted,group,snapshot,snapshots,last_check,last_drill\r\n/);
    const bad = await call(admin, "GET", "/api/reports/evidence?from=2026-11-21&to=2026-11-01");
    expect(bad.status).toBe(400);
    const digest = await call(admin, "GET", "/api/reports/digest?period=weekly");
    expect(digest.body.digest.hosts.total).toBe(report.body.hosts.length);
    expect(digest.body.title).toMatch(/^Fleetback: /);

    const mail = await call(admin, "POST", "/api/notification-channels", {
      name: "report mail",
      kind: "email",
      config: {
        host: "smtp.example.org",
        port: 25,
        security: "none",
        from: "f@example.org",
        to: ["a@example.org"],
      },
    });
    const schedule = await call(admin, "POST", "/api/reports/schedules", {
      name: "weekly prod",
      channel_id: mail.body.notification_channel.id,
      recipients: ["auditor@example.org"],
      period: "weekly",
      time: "08:00",
      selector: "env=prod",
    });
    expect(schedule.status).toBe(201);
    const id = schedule.body.report_schedule.id as string;
    expect(schedule.body.report_schedule.when).toBe("weekly on Monday at 08:00");
    const changed = await call(admin, "PUT", `/api/reports/schedules/${id}`, { period: "monthly" });
    expect(changed.body.report_schedule).toMatchObject({
      weekday: null,
      when: "monthly on the 1st at 08:00",
    });
    expect((await call(admin, "GET", "/api/reports/schedules")).body.report_schedules).toHaveLength(1);
    expect((await call(admin, "DELETE", `/api/reports/schedules/${id}`)).status).toBe(204);
    await call(admin, "DELETE", `/api/notification-channels/${mail.body.notification_channel.id}`);
  });

  it("fleet policies: create, preview, edit, versions, rollback, a host's provenance, delete", async () => {
    const body = {
      name: "prod-baseline",
      selector: "env=prod",
      spec: {
        groups: [{ name: "etc-policy", includes: ["/etc"], retention_policy: { daily: 7 } }],
        schedules: [{ name: "nightly", cron: "0 2 * * *", groups: ["etc-policy"] }],
      },
    };
    expect((await call(admin, "POST", "/api/policies/preview", body)).body.hosts_covered).toBe(1);
    const created = await call(admin, "POST", "/api/policies", body);
    expect(created.status).toBe(201);
    const id = created.body.policy.id as string;
    expect((await call(admin, "GET", "/api/policies")).body.policies).toHaveLength(1);
    expect((await call(admin, "GET", `/api/policies/${id}`)).body.policy.version).toBe(1);
    const edit = {
      ...body,
      spec: { ...body.spec, groups: [{ ...body.spec.groups[0], excludes: ["*.tmp"] }] },
    };
    expect((await call(admin, "POST", `/api/policies/${id}/preview`, edit)).body.hosts_changed).toBe(1);
    expect((await call(admin, "PUT", `/api/policies/${id}`, edit)).body.policy.version).toBe(2);
    expect((await call(admin, "GET", `/api/policies/${id}/versions`)).body.versions).toHaveLength(2);
    const second = await call(admin, "GET", `/api/policies/${id}/versions/2`);
    expect(second.body.changes).toEqual([
      { path: 'spec.groups["etc-policy"].excludes', before: null, after: ["*.tmp"] },
    ]);
    expect((await call(admin, "POST", `/api/policies/${id}/versions/1/rollback`)).body.policy.version).toBe(
      3,
    );
    const provenance = await call(admin, "GET", `/api/hosts/${offlineHostId}/policies`);
    expect(provenance.body.groups).toContainEqual(
      expect.objectContaining({ name: "etc-policy", from: { id, name: "prod-baseline", version: 3 } }),
    );
    const document = (await call(admin, "GET", "/api/fleet-config")).body;
    expect(document.version).toBe(1);
    const dry = await call(admin, "POST", "/api/fleet-config/apply", { document, dry_run: true });
    expect(dry.body.changes).toEqual([]);
    const applied = await call(admin, "POST", "/api/fleet-config/apply", {
      document: { ...document, policies: [] },
    });
    expect(applied.body.changes).toEqual([
      { subject: "policy prod-baseline", path: "", before: { selector: "env=prod" }, after: null },
    ]);
    expect(
      (await call(admin, "POST", "/api/hosts/actions", { selector: "env=prod", action: "pause" })).body
        .matched,
    ).toBe(1);
    const versions = (await call(admin, "GET", "/api/agent-versions")).body as Array<{ version: string }>;
    const rollout = await call(admin, "POST", "/api/agent-rollouts", {
      version: versions[0]?.version,
      rings: [{ selector: "env=prod", max_failed: 0 }, { selector: "" }],
    });
    expect(rollout.status).toBe(201);
    expect((await call(admin, "GET", "/api/agent-rollouts")).body.rollouts).toHaveLength(1);
    expect((await call(admin, "GET", `/api/agent-rollouts/${rollout.body.id}`)).body.rings).toHaveLength(2);
    await seedHost(deps, { name: "to-delete", labels: { gone: "yes" } });
    expect(
      (await call(admin, "POST", "/api/hosts/delete", { selector: "gone=yes", confirm_count: 1 })).body
        .matched,
    ).toBe(1);
    const spare = await call(admin, "POST", "/api/policies", { ...body, name: "spare" });
    expect((await call(admin, "DELETE", `/api/policies/${spare.body.policy.id}`)).status).toBe(204);
  });

  it("the audit trail, renaming and deleting a host", async () => {
    expect((await call(admin, "GET", "/api/audit?limit=5")).body.entries).toHaveLength(5);
    const renamed = await call(admin, "PATCH", `/api/hosts/${offlineHostId}`, { name: "db-1-renamed" });
    expect(renamed.body).toEqual({ host: { id: offlineHostId, name: "db-1-renamed" } });
    expect((await call(admin, "DELETE", `/api/hosts/${hostId}/mirror-credentials`)).status).toBe(204);
    expect((await call(admin, "DELETE", `/api/hosts/${offlineHostId}`)).status).toBe(204);
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
  it("every documented operation was answered successfully above", () => {
    const missing = API_OPERATIONS.filter((op) => {
      const statuses = [...(checker.seen.get(op.id) ?? [])];
      return !statuses.some((status) => status < 300);
    }).map((op) => `${op.method.toUpperCase()} ${op.path}`);
    expect(missing).toEqual([]);
  });
});

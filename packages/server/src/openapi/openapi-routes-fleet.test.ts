/**
 * The answers of fleet-wide routes on a seeded app (enrolment and the agents' own calls, agent
 * versions and rollouts, labels, file search, reports and fleet policies) match the OpenAPI
 * document, as openapi-routes.test.ts explains. The tests build on each other in order: the
 * labels set here are what the policies' selectors match.
 */
import { encodePublicKey, generateSigningKeyPair, sign } from "@fleetback/crypto";
import type { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../auth/actor.js";
import { applyCatalogPart } from "../catalog/catalog-apply.js";
import { delta, entry, reportSnapshots, seedGroup } from "../catalog/catalog-test-support.js";
import { createTestClient, type TestClient } from "../testing/http.js";
import { unansweredInShare } from "../testing/openapi-route-shares.js";
import { UNSENT_MAIL_CONFIG } from "../testing/report-mail-channel.js";
import { seedHost } from "../testing/seed.js";
import { useSeededApi } from "../testing/seeded-api.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps;
let app: Hono<AppEnv>;
let admin: TestClient;
let hostId: string;
let offlineHostId: string;
const { checker, call } = useSeededApi((api) => {
  ({ deps, app, admin, hostId, offlineHostId } = api);
});

describe("answers match their documented schemas", () => {
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
      config: UNSENT_MAIL_CONFIG,
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
});

describe("coverage", () => {
  it("every operation of this file's share was answered successfully above", () => {
    expect(unansweredInShare(checker, "openapi-routes-fleet.test.ts")).toEqual([]);
  });
});

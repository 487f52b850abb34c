/**
 * The answers of one host's routes on a seeded app (its source groups, schedules, credentials,
 * jobs, snapshots, restores, alerts and its deletion) match the OpenAPI document, as
 * openapi-routes.test.ts explains. The tests build on each other in order: the groups made first
 * are the ones the host's jobs, alerts and dashboard rows are about.
 */
import { alerts, jobLogs, schedules, sourceGroups } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { raiseAlert } from "../alerts/alerts.js";
import { openHold } from "../holds/deletion-holds.js";
import type { TestClient } from "../testing/http.js";
import { unansweredInShare } from "../testing/openapi-route-shares.js";
import { seedHost, seedJob } from "../testing/seed.js";
import { DAY, PASSWORD, snapshotId, useSeededApi } from "../testing/seeded-api.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps;
let admin: TestClient;
let hostId: string;
let offlineHostId: string;
const { checker, call } = useSeededApi((api) => {
  ({ deps, admin, hostId, offlineHostId } = api);
});

describe("answers match their documented schemas", () => {
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

  it("the audit trail, renaming and deleting a host", async () => {
    expect((await call(admin, "GET", "/api/audit?limit=5")).body.entries).toHaveLength(5);
    const renamed = await call(admin, "PATCH", `/api/hosts/${offlineHostId}`, { name: "db-1-renamed" });
    expect(renamed.body).toEqual({ host: { id: offlineHostId, name: "db-1-renamed" } });
    expect((await call(admin, "DELETE", `/api/hosts/${hostId}/mirror-credentials`)).status).toBe(204);
    expect((await call(admin, "DELETE", `/api/hosts/${offlineHostId}`)).status).toBe(204);
  });
});

describe("coverage", () => {
  it("every operation of this file's share was answered successfully above", () => {
    expect(unansweredInShare(checker, "openapi-routes-hosts.test.ts")).toEqual([]);
  });
});

import { alerts, auditLog } from "@fleetback/db";
import { and, eq, isNull } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createJob } from "../jobs/create-job.js";
import { createServerJobReports, type JobReports } from "../jobs/job-reports.js";
import { createBackupCopies } from "../mirror/mirror-copy.js";
import { upkeepMirrorAfter } from "../mirror/mirror-upkeep.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { csrfFrom, messageOf } from "../testing/http.js";
import { createRecordingConnection, type RecordingConnection } from "../testing/recording-connection.js";
import { seedHost } from "../testing/seed.js";
import { signedInPerTest } from "../testing/signed-in-app.js";

const MIRROR_CANARY = "Mirror-Canary-8812-secret";

const s = signedInPerTest({ users: [{ username: "oper", role: "operator" }] });
let hostId: string;
let agent: RecordingConnection;
let reports: JobReports;

beforeEach(async () => {
  hostId = (await seedHost(s.deps, { name: "db-01", protocolVersion: 8 })).host.id;
  agent = createRecordingConnection(hostId);
  s.deps.hub.register(agent);
  const copies = createBackupCopies(s.deps);
  reports = createServerJobReports(s.deps, {
    afterSuccess: (host, job, summary) =>
      job.kind === "backup"
        ? copies.afterBackup(host, job.id, summary)
        : upkeepMirrorAfter(s.deps, host, job),
    afterSnapshots: (host) => copies.afterSnapshots(host),
  });
});
afterEach(async () => {
  await reports.close();
});

const id = (n: number) => n.toString(16).padStart(64, "0");
async function cacheSnapshots(times: string[]) {
  await replaceSnapshots(s.deps.db, hostId, {
    refreshed_at: "2026-11-20T04:00:00Z",
    snapshots: times.map((time, index) => ({
      id: id(index + 1),
      short_id: id(index + 1).slice(-8),
      time,
      hostname: "db-01",
      paths: ["/etc"],
      tags: ["etc"],
      size_bytes: 1,
      file_count: 1,
    })),
  });
}

async function hostJson() {
  return (
    (await (await s.users.oper.request(`/api/hosts/${hostId}`)).json()) as {
      host: { mirror: Record<string, unknown> };
    }
  ).host.mirror;
}

/** The mirror_failed alerts still open: one per kind of job that failed on the mirror. */
const openMirrorAlerts = () =>
  s.deps.db
    .select()
    .from(alerts)
    .where(and(eq(alerts.kind, "mirror_failed"), isNull(alerts.resolvedAt)));

const bindMirror = () =>
  s.admin.json("PUT", `/api/hosts/${hostId}/mirror-credentials`, {
    url: "rest:http://127.0.0.1:8001/db-01/",
    username: "db-01",
    password: MIRROR_CANARY,
  });

/** Runs a job through the agent's reports as the agent would end it. */
async function finish(jobId: string, status: "succeeded" | "failed", summary?: Record<string, unknown>) {
  await reports.finished(hostId, {
    job_id: jobId,
    status,
    exit_code: status === "succeeded" ? 0 : 1,
    ...(status === "failed"
      ? { error: "Fatal: unable to open repository at rest:http://127.0.0.1:8001/db-01/" }
      : {}),
    ...(summary ? { summary } : {}),
  });
}

const lastCommand = () => agent.frames.filter((frame) => frame.type === "command.run").at(-1);

describe("a host's mirror (issue 18.3)", () => {
  it("is bound by admins only, sealed, never shown or pushed before a copy", async () => {
    const refused = await s.users.oper.json("PUT", `/api/hosts/${hostId}/mirror-credentials`, {
      url: "rest:http://127.0.0.1:8001/db-01/",
      password: MIRROR_CANARY,
    });
    expect(refused.status).toBe(403);
    const incomplete = await s.admin.json("PUT", `/api/hosts/${hostId}/mirror-credentials`, {
      url: "rest:x",
    });
    expect(incomplete.status).toBe(400);
    expect(await messageOf(incomplete)).toMatch(/^password: /);
    expect(await hostJson()).toMatchObject({ configured: false, snapshot_count: null, last_copy: null });

    expect((await bindMirror()).status).toBe(200);
    expect(await hostJson()).toMatchObject({
      configured: true,
      agent_supported: true,
      repository: { state: "bound", url: "rest:http://127.0.0.1:8001/db-01/", username: "db-01" },
    });
    expect(agent.frames.filter((frame) => frame.type === "config.update")).toEqual([]);
    const page = await (await s.admin.request(`/hosts/${hostId}`)).text();
    expect(page).toContain('data-testid="mirror-count"');
    const everything = `${page}${JSON.stringify(await hostJson())}${JSON.stringify(await s.deps.db.select().from(auditLog))}`;
    expect(everything).not.toContain(MIRROR_CANARY);
    const [audit] = await s.deps.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.action, "host.mirror_credentials.update"));
    expect(audit?.details).toEqual({ fields: ["url", "username", "password"] });
  });

  it("copies after each good backup: the mirror slot first, then the host's newest snapshots, newest first", async () => {
    await cacheSnapshots(["2026-11-20T01:00:00Z", "2026-11-20T02:00:00Z"]);
    const backup = await createJob(s.deps, { hostId, kind: "backup", actorKind: "schedule" });
    await finish(backup.id, "succeeded");
    // No mirror: nothing is sent.
    expect(lastCommand()).toBeUndefined();

    await bindMirror();
    const again = await createJob(s.deps, { hostId, kind: "backup", actorKind: "schedule" });
    await finish(again.id, "succeeded");
    const [mirrorSlot, copy] = agent.frames.slice(-2);
    expect(mirrorSlot).toMatchObject({
      type: "config.update",
      payload: { slot: "mirror", repository: { username: "db-01", password: MIRROR_CANARY } },
    });
    expect(copy).toMatchObject({
      type: "command.run",
      payload: { kind: "copy", copy: { snapshot_ids: [id(2), id(1)] } },
    });
    // A failed backup copies nothing.
    const frames = agent.frames.length;
    const failed = await createJob(s.deps, { hostId, kind: "backup", actorKind: "schedule" });
    await finish(failed.id, "failed");
    expect(agent.frames.length).toBe(frames);

    // The copy is still running: Copy now says so instead of starting a second one.
    const busy = await s.users.oper.json("POST", `/api/hosts/${hostId}/mirror/copy`);
    expect(busy.status).toBe(409);
    expect(await messageOf(busy)).toMatch(/already queued or running/);
  });

  it("waits for the list that has the new snapshot when it follows job.finished (protocol 10)", async () => {
    await bindMirror();
    await cacheSnapshots(["2026-11-20T01:00:00Z"]);
    const backup = await createJob(s.deps, { hostId, kind: "backup", actorKind: "schedule" });
    // The backup wrote snapshot 2, which the server's list does not have yet: no copy.
    await finish(backup.id, "succeeded", { snapshot_id: id(2), files_new: 1 });
    expect(lastCommand()).toBeUndefined();
    // The list after the backup: now the copy names the new snapshot first.
    await cacheSnapshots(["2026-11-20T01:00:00Z", "2026-11-20T02:00:00Z"]);
    await reports.snapshotsStored(hostId);
    expect(lastCommand()).toMatchObject({
      type: "command.run",
      payload: { kind: "copy", copy: { snapshot_ids: [id(2), id(1)] } },
    });
    // Only once: a later list (a forget's) starts nothing more.
    const frames = agent.frames.length;
    await reports.snapshotsStored(hostId);
    expect(agent.frames.length).toBe(frames);
  });

  it("copies at once when the new snapshot is already listed (agents before protocol 10; 0.14's short id)", async () => {
    await bindMirror();
    await cacheSnapshots(["2026-11-20T01:00:00Z", "2026-11-20T02:00:00Z"]);
    const backup = await createJob(s.deps, { hostId, kind: "backup", actorKind: "schedule" });
    await finish(backup.id, "succeeded", { snapshot_id: id(2).slice(-8) });
    expect(lastCommand()).toMatchObject({
      type: "command.run",
      payload: { kind: "copy", copy: { snapshot_ids: [id(2), id(1)] } },
    });
  });

  it("a failed copy opens mirror_failed, a good one resolves it and shows count and lag", async () => {
    await bindMirror();
    await cacheSnapshots(["2026-11-20T01:00:00Z", "2026-11-20T02:00:00Z", "2026-11-20T03:00:00Z"]);
    const first = await s.users.oper.json("POST", `/api/hosts/${hostId}/mirror/copy`);
    expect(first.status).toBe(201);
    const firstJob = ((await first.json()) as { job_id: string }).job_id;
    await finish(firstJob, "failed");
    const open = await openMirrorAlerts();
    expect(open).toHaveLength(1);
    expect(open[0]?.message).toMatch(/^copy to the mirror failed: Fatal: unable to open repository/);
    expect(await hostJson()).toMatchObject({
      last_copy: { job_id: firstJob, status: "failed" },
      snapshot_count: null,
    });

    const second = (
      (await (await s.users.oper.json("POST", `/api/hosts/${hostId}/mirror/copy`)).json()) as {
        job_id: string;
      }
    ).job_id;
    // The mirror caught up to 02:00 only: one snapshot behind.
    await finish(second, "succeeded", {
      initialised: true,
      requested: 3,
      mirrored: 3,
      missing: [],
      mirror_snapshot_count: 2,
      mirror_latest_time: "2026-11-20T02:00:00.000Z",
    });
    expect(await openMirrorAlerts()).toEqual([]);
    expect(await hostJson()).toMatchObject({
      last_copy: { job_id: second, status: "succeeded" },
      snapshot_count: 2,
      latest_snapshot_at: "2026-11-20T02:00:00.000Z",
      snapshots_behind: 1,
      lag_seconds: 3600,
    });
    const page = await (await s.users.oper.request(`/hosts/${hostId}`)).text();
    expect(page).toContain("1 snapshot behind");
  });

  it("refuses Copy now with the reason: no mirror, no snapshot, an agent too old; and removes the mirror", async () => {
    const noMirror = await s.users.oper.json("POST", `/api/hosts/${hostId}/mirror/copy`);
    expect(noMirror.status).toBe(409);
    expect(await messageOf(noMirror)).toMatch(/no mirror repository/);
    await bindMirror();
    const noSnapshots = await s.users.oper.json("POST", `/api/hosts/${hostId}/mirror/copy`);
    expect(await messageOf(noSnapshots)).toMatch(/no snapshot of this host/);
    await cacheSnapshots(["2026-11-20T01:00:00Z"]);

    const old = (await seedHost(s.deps, { name: "old-01", protocolVersion: 7 })).host.id;
    await s.admin.json("PUT", `/api/hosts/${old}/mirror-credentials`, {
      url: "rest:http://m/old/",
      password: "pw",
    });
    const tooOld = await s.users.oper.json("POST", `/api/hosts/${old}/mirror/copy`);
    expect(tooOld.status).toBe(409);
    expect(await messageOf(tooOld)).toMatch(/protocol 8 or later/);

    // The page's Copy now goes to the job's page.
    const csrf = csrfFrom(await (await s.users.oper.request(`/hosts/${hostId}`)).text());
    const viaPage = await s.users.oper.form(`/hosts/${hostId}/mirror/copy`, { _csrf: csrf });
    expect(viaPage.status).toBe(303);
    expect(viaPage.headers.get("Location")).toMatch(/^\/jobs\//);
    await finish(String(viaPage.headers.get("Location")).slice("/jobs/".length), "failed");

    expect((await s.users.oper.json("DELETE", `/api/hosts/${hostId}/mirror-credentials`)).status).toBe(403);
    expect((await s.admin.json("DELETE", `/api/hosts/${hostId}/mirror-credentials`)).status).toBe(204);
    expect(await hostJson()).toMatchObject({ configured: false });
    // Nothing left to fail: the open mirror_failed goes with the mirror.
    expect(await openMirrorAlerts()).toEqual([]);
    expect((await s.admin.json("DELETE", `/api/hosts/${hostId}/mirror-credentials`)).status).toBe(404);
  });

  it("follows the repository's forget, prune and check on the mirror, with its own alert key per kind", async () => {
    await bindMirror();
    await s.admin.json("POST", `/api/hosts/${hostId}/source-groups`, {
      name: "etc",
      includes: ["/etc"],
      retention_policy: { last: 3 },
    });
    for (const kind of ["forget", "prune", "check"] as const) {
      const primary = await createJob(s.deps, {
        hostId,
        kind,
        actorKind: "schedule",
        params: kind === "check" ? { read_data_subset: "5%" } : {},
      });
      await finish(primary.id, "succeeded");
      const [slot, command] = agent.frames.slice(-2);
      expect(slot).toMatchObject({ type: "config.update", payload: { slot: "mirror" } });
      expect(command).toMatchObject({
        type: "command.run",
        payload: { kind, on_mirror: true, requires_admin_creds: false },
      });
      if (kind === "forget") {
        expect(command?.payload).toMatchObject({ forget_groups: [{ tag: "etc", keep: { last: 3 } }] });
      }
      if (kind === "check") {
        expect(command?.payload).toMatchObject({ check: { read_data_subset: "5%" } });
      }
      const mirrorJob = String((command?.payload as { job_id?: string } | undefined)?.job_id);
      // A failing mirror job raises mirror_failed under its kind, and starts nothing after it.
      const frames = agent.frames.length;
      await finish(mirrorJob, "failed");
      expect(agent.frames.length).toBe(frames);
    }
    const open = await openMirrorAlerts();
    expect(open.map((alert) => alert.dedupKey).sort()).toEqual(["check", "forget", "prune"]);
    expect(open.find((alert) => alert.dedupKey === "prune")?.message).toMatch(/^prune on the mirror failed/);
    // The host's own forget_failed is untouched by the mirror's.
    expect(await s.deps.db.select().from(alerts).where(eq(alerts.kind, "forget_failed"))).toEqual([]);

    // A forget of chosen snapshots is not repeated on the mirror.
    const frames = agent.frames.length;
    const chosen = await createJob(s.deps, {
      hostId,
      kind: "forget",
      actorKind: "user",
      params: { snapshot_ids: [id(1)] },
    });
    await finish(chosen.id, "succeeded");
    expect(agent.frames.length).toBe(frames);

    expect((await s.admin.json("DELETE", `/api/hosts/${hostId}/mirror-credentials`)).status).toBe(204);
    expect(await openMirrorAlerts()).toEqual([]);
  });
});

/**
 * Restore onto another host (issue 38), in-process, on both engines: a snapshot of web-1 restored
 * onto web-2 through `POST /api/hosts/{web-2}/restore` with `from_host_id`. web-2's agent gets
 * web-1's repository credential for that job alone, ahead of a `kept` restore whose signed order
 * names web-2 and web-1's repository; the job, its audit entry and its alert name both hosts.
 * Every refusal names its field and sends nothing.
 */

import { mergeUrlCredentials, repositoryDigest } from "@fleetback/crypto";
import type { Database } from "@fleetback/db";
import { alerts, auditLog, hosts, jobs } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import {
  type CommandRunRestore,
  CROSS_HOST_RESTORE_PROTOCOL_VERSION,
  type RestoreOrderPayload,
} from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { createJobAlerts } from "../alerts/job-alerts.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { createRecordingConnection, type RecordingConnection } from "../testing/recording-connection.js";
import { bindCredentials, seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

const SNAP_A = "c503a2e1411551581f05e3024dc276492c1af6f7dafd51834fef527d035c3680";
const SNAP_B = "b6926cf4b56e08d52e23b47ed13dc7c0f3ade7f8eabe18b3dd6ca809e77d963a";
const A_URL = "rest:https://backup.example.net/web-1/";
const A_PASSWORD = "web-1-canary-pass";

interface Setup {
  deps: TestDeps;
  client: TestClient;
  a: string;
  b: string;
  agentA: RecordingConnection;
  agentB: RecordingConnection;
}

function snapshot(id: string, hostname: string) {
  return {
    id,
    short_id: id.slice(0, 8),
    time: "2026-11-21T10:00:00Z",
    hostname,
    paths: ["/srv/data"],
    tags: [],
    size_bytes: 4096,
    file_count: 7,
  };
}

async function setup(db: Database): Promise<Setup> {
  const { deps, users } = await startSignedInApp({
    deps: { db },
    users: [{ username: "olga", role: "operator" }],
  });
  const client = users.olga;
  const { host: a } = await seedHost(deps, {
    name: "web-1",
    protocolVersion: CROSS_HOST_RESTORE_PROTOCOL_VERSION,
  });
  const { host: b } = await seedHost(deps, {
    name: "web-2",
    protocolVersion: CROSS_HOST_RESTORE_PROTOCOL_VERSION,
  });
  await bindCredentials(deps, a.id, {
    repo: { url: A_URL, username: "web-1", password: A_PASSWORD },
    admin: { url: A_URL, username: "web-1-admin", password: "web-1-admin-pass" },
  });
  await bindCredentials(deps, b.id, {
    repo: { url: "rest:https://backup.example.net/web-2/", password: "b" },
  });
  await replaceSnapshots(deps.db, a.id, {
    refreshed_at: "2026-11-21T11:00:00Z",
    snapshots: [snapshot(SNAP_A, "web-1")],
  });
  await replaceSnapshots(deps.db, b.id, {
    refreshed_at: "2026-11-21T11:00:00Z",
    snapshots: [snapshot(SNAP_B, "web-2")],
  });
  const agentA = createRecordingConnection(a.id);
  const agentB = createRecordingConnection(b.id);
  deps.hub.register(agentA);
  deps.hub.register(agentB);
  return { deps, client, a: a.id, b: b.id, agentA, agentB };
}

function restoreOnto(s: Setup, body: Record<string, unknown>) {
  return s.client.json("POST", `/api/hosts/${s.b}/restore`, {
    snapshot_id: SNAP_A,
    paths: ["/srv/data/report.txt"],
    in_place: false,
    from_host_id: s.a,
    ...body,
  });
}

/** The wizard of web-1's snapshot, posted as a browser does with the page's CSRF token. */
async function submitWizard(s: Setup, fields: Array<[string, string]>) {
  const session = "wizard-session-0123456789";
  const page = await s.client.request(`/hosts/${s.a}/snapshots/${SNAP_A}/restore?session=${session}`);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain('data-testid="restore-onto"');
  expect(html).toContain(`<option value="${s.b}">web-2</option>`);
  const body = new URLSearchParams([["_csrf", csrfFrom(html)], ["session", session], ...fields]);
  return s.client.request(`/hosts/${s.a}/restore`, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Origin: new URL(s.deps.config.baseUrl).origin,
    },
    body: body.toString(),
  });
}

runDbSuite("restore onto another host", (getDb) => {
  it("the wizard of web-1's snapshot restores onto web-2 when chosen, and shows refusals at the choice", async () => {
    const s = await setup(getDb());
    const fields = (onto: string, action: string): Array<[string, string]> => [
      ["snapshot_id", SNAP_A],
      ["paths", "/srv/data/report.txt"],
      ["in_place", "true"],
      ["confirm_hostname", "web-2"],
      ["onto_host_id", onto],
      ["action", action],
    ];
    const unknown = await submitWizard(s, fields("01NOSUCHHOST0000000000000", "review"));
    expect(unknown.status).toBe(400);
    const refused = await unknown.text();
    expect(refused).toContain('data-testid="error-onto_host_id"');
    expect(refused).toMatch(/<select name="onto_host_id"[^>]*aria-invalid="true"/);

    const review = await submitWizard(s, fields(s.b, "review"));
    expect(review.status).toBe(200);
    const reviewed = await review.text();
    expect(reviewed).toContain("a restore of web-1's snapshot onto web-2");
    expect(reviewed).toContain(`<input type="hidden" name="onto_host_id" value="${s.b}">`);
    expect(s.agentB.frames).toEqual([]);

    const done = await submitWizard(s, fields(s.b, "restore"));
    expect(done.status).toBe(303);
    const [job] = await s.deps.db.select().from(jobs);
    expect(done.headers.get("location")).toBe(`/jobs/${job?.id}`);
    expect(job).toMatchObject({ hostId: s.b, params: { from_host_id: s.a, in_place: true } });
    expect(s.agentB.frames.map((frame) => frame.type)).toEqual(["config.update", "command.run"]);
    expect(s.agentA.frames).toEqual([]);
  });

  it("pushes web-1's repo credential to web-2 for the job alone, then a kept restore ordered for web-2", async () => {
    const s = await setup(getDb());
    const res = await restoreOnto(s, { target_dir: "/srv/from-web-1/<job-id>/" });
    expect(res.status).toBe(201);
    const { job_id: jobId } = (await res.json()) as { job_id: string };

    expect(s.agentA.frames).toEqual([]);
    const [push, run] = s.agentB.frames;
    expect(s.agentB.frames).toHaveLength(2);
    expect(push).toMatchObject({
      type: "config.update",
      payload: {
        slot: "repo",
        job_id: jobId,
        repository: { url: A_URL, username: "web-1", password: A_PASSWORD },
      },
    });
    expect(run?.type).toBe("command.run");
    const command = run?.payload as CommandRunRestore;
    expect(command).toMatchObject({
      job_id: jobId,
      kind: "restore",
      kept: true,
      requires_admin_creds: false,
    });
    expect(command.restore).toMatchObject({ snapshot_id: SNAP_A, target_dir: `/srv/from-web-1/${jobId}/` });
    const order = JSON.parse(command.restore.order?.payload ?? "{}") as RestoreOrderPayload;
    expect(order.host_id).toBe(s.b);
    expect(order.repository_sha256).toBe(repositoryDigest(mergeUrlCredentials(A_URL, "web-1", A_PASSWORD)));
    // Never the admin credential, never any password in what is kept.
    expect(JSON.stringify(s.agentB.frames)).not.toContain("web-1-admin-pass");

    const [job] = await s.deps.db.select().from(jobs).where(eq(jobs.id, jobId));
    expect(job?.hostId).toBe(s.b);
    expect(job?.params).toMatchObject({ from_host_id: s.a, from_host_name: "web-1", snapshot_id: SNAP_A });
    expect(JSON.stringify(job?.params)).not.toContain(A_PASSWORD);
    const [entry] = await s.deps.db.select().from(auditLog).where(eq(auditLog.action, "host.restore"));
    expect(entry?.targetId).toBe(s.b);
    expect(entry?.details).toMatchObject({
      summary: "restore of web-1's snapshot onto web-2",
      from_host_id: s.a,
      from_host_name: "web-1",
      job_id: jobId,
    });
    expect(JSON.stringify(entry?.details)).not.toContain(A_PASSWORD);

    const page = await (await s.client.request(`/jobs/${jobId}`)).text();
    expect(page).toContain('data-testid="job-restore-from"');
    expect(page).toMatch(
      /a snapshot of <a href="\/hosts\/[0-9A-Z]+">web-1<\/a> onto <a href="\/hosts\/[0-9A-Z]+">web-2<\/a>/,
    );
    expect(page).not.toContain(A_PASSWORD);
  });

  it("restores in place on web-2 only when web-2's own name is typed", async () => {
    const s = await setup(getDb());
    const wrong = await restoreOnto(s, { in_place: true, confirm_hostname: "web-1" });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { message: string }).message).toMatch(
      /^confirm_hostname: type the host name web-2/,
    );
    expect(s.agentB.frames).toEqual([]);
    const right = await restoreOnto(s, { in_place: true, confirm_hostname: "web-2" });
    expect(right.status).toBe(201);
    const command = s.agentB.frames.at(-1)?.payload as CommandRunRestore;
    expect(command.restore.in_place).toBe(true);
    expect(command.kept).toBe(true);
  });

  it("refuses by field and sends nothing: unknown host, a snapshot not of web-1, an old agent, no credential", async () => {
    const s = await setup(getDb());
    const message = async (body: Record<string, unknown>) => {
      const res = await restoreOnto(s, body);
      expect(res.status).toBe(400);
      return ((await res.json()) as { message: string }).message;
    };
    expect(await message({ from_host_id: "01NOSUCHHOST0000000000000" })).toMatch(
      /^from_host_id: .* is not a host/,
    );
    // web-2's own snapshot is not one of web-1's.
    expect(await message({ snapshot_id: SNAP_B })).toBe(`snapshot_id: ${SNAP_B} is not a snapshot of web-1`);
    expect(await message({ paths: ["/etc/fleetback-agent/agent.json"] })).toMatch(
      /^paths: .*agent's own directory/,
    );

    await s.deps.db
      .update(hosts)
      .set({ protocolVersion: CROSS_HOST_RESTORE_PROTOCOL_VERSION - 1 })
      .where(eq(hosts.id, s.b));
    expect(await message({})).toMatch(
      /^from_host_id: web-2's agent \(protocol 13\) cannot restore another host's snapshot/,
    );
    await s.deps.db
      .update(hosts)
      .set({ protocolVersion: CROSS_HOST_RESTORE_PROTOCOL_VERSION })
      .where(eq(hosts.id, s.b));

    // A protected host never holds delete authority: an unprotected host's credential may carry it.
    const { host: keeper } = await seedHost(s.deps, { name: "keeper-1" });
    await s.deps.db.update(hosts).set({ keeperHostId: keeper.id }).where(eq(hosts.id, s.b));
    expect(await message({})).toMatch(/^from_host_id: web-2 is protected and never holds delete authority/);
    await s.deps.db.update(hosts).set({ keeperHostId: null }).where(eq(hosts.id, s.b));

    const { host: bare } = await seedHost(s.deps, { name: "web-3" });
    expect(await message({ from_host_id: bare.id })).toBe(
      "from_host_id: web-3 has no repository credentials to read its snapshots with",
    );
    expect(s.agentA.frames).toEqual([]);
    expect(s.agentB.frames).toEqual([]);
    expect(await s.deps.db.select().from(jobs)).toEqual([]);
  });

  it("a failed restore's alert names both hosts and leaves web-2's repository state alone", async () => {
    const s = await setup(getDb());
    const res = await restoreOnto(s, {});
    const { job_id: jobId } = (await res.json()) as { job_id: string };
    const jobAlerts = createJobAlerts(s.deps);
    await jobAlerts.jobEnded({
      jobId,
      hostId: s.b,
      kind: "restore",
      sourceGroupId: null,
      fromHostName: "web-1",
      status: "failed",
      exitCode: 1,
      error: "the repository did not answer",
      repositoryUnreachable: true,
    });
    const opened = await s.deps.db.select().from(alerts).where(eq(alerts.hostId, s.b));
    expect(opened.map((alert) => [alert.kind, alert.message])).toEqual([
      ["restore_failed", "restore of web-1's snapshot failed: the repository did not answer"],
    ]);
  });
});

/**
 * Forgetting one snapshot from the snapshots tab and its API, in-process, on both engines: admin
 * only, typed confirmation, only a snapshot of this host, never to an agent below protocol 7, one
 * command.run naming the snapshot and no policy, audited.
 */
import { auditLog, jobs } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import type { CommandRun } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { csrfFrom } from "../testing/http.js";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { seedHost } from "../testing/seed.js";
import { idOf, reportSnapshots, SLOW, snap, startSnapshotsTab } from "../testing/snapshots-tab.js";

runDbSuite("snapshots tab: forgetting one snapshot", (getDb) => {
  it(
    "lets an admin forget one snapshot of this host after typing its short id: one forget naming it, no policy, audited",
    async () => {
      const s = await startSnapshotsTab(getDb());
      await reportSnapshots(s, [snap(2, "2026-11-20T02:00:00Z"), snap(1, "2026-11-20T01:00:00Z")]);
      const target = snap(1, "");
      const listing = await (await s.admin.request(`/hosts/${s.hostId}/snapshots`)).text();
      expect(listing).toContain(`href="/hosts/${s.hostId}/snapshots/${target.id}/forget"`);
      const operatorListing = await (
        await (await s.operator()).request(`/hosts/${s.hostId}/snapshots`)
      ).text();
      expect(operatorListing).not.toContain('data-testid="snapshot-forget"');

      const confirm = await s.admin.request(`/hosts/${s.hostId}/snapshots/${target.id}/forget`);
      expect(confirm.status).toBe(200);
      const confirmHtml = await confirm.text();
      expect(confirmHtml).toContain(target.id);
      const csrf = csrfFrom(confirmHtml);

      const wrong = await s.admin.form(`/hosts/${s.hostId}/snapshots/${target.id}/forget`, {
        _csrf: csrf,
        confirm: idOf(2).slice(-8),
      });
      expect(wrong.status).toBe(400);
      expect(await wrong.text()).toContain(`confirm: type ${target.short_id} to forget this snapshot`);
      expect(s.agent.frames).toHaveLength(0);

      const done = await s.admin.form(`/hosts/${s.hostId}/snapshots/${target.id}/forget`, {
        _csrf: csrf,
        confirm: ` ${target.short_id.toUpperCase()} `,
      });
      expect(done.status).toBe(303);
      const location = done.headers.get("location") ?? "";
      expect(location).toMatch(/^\/jobs\/[0-9A-Z]{26}$/);
      const jobId = location.split("/").pop() ?? "";
      expect(s.agent.frames).toHaveLength(1);
      const frame = s.agent.frames[0];
      expect(frame?.type).toBe("command.run");
      const command = frame?.payload as CommandRun;
      expect(command).toMatchObject({
        job_id: jobId,
        kind: "forget",
        forget_groups: [],
        snapshot_ids: [target.id],
      });
      const [job] = await s.deps.db.select().from(jobs).where(eq(jobs.id, jobId));
      expect(job).toMatchObject({ kind: "forget", hostId: s.hostId, params: { snapshot_ids: [target.id] } });
      const audit = await s.deps.db.select().from(auditLog).where(eq(auditLog.action, "snapshot.forget"));
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ targetKind: "snapshot", targetId: target.id });
      expect(audit[0]?.details).toMatchObject({ host_id: s.hostId, job_id: jobId });

      // The API does the same for an admin (htmx and scripts), and answers the job id.
      const api = await s.admin.json("POST", `/api/hosts/${s.hostId}/snapshots/${idOf(2)}/forget`, {});
      expect(api.status).toBe(201);
      expect(((await api.json()) as { job_id: string }).job_id).toMatch(/^[0-9A-Z]{26}$/);
      expect(s.agent.frames).toHaveLength(2);
    },
    SLOW,
  );

  it(
    "refuses everyone but an admin, another host's snapshot, a short id, an old agent and an offline host, sending nothing",
    async () => {
      const s = await startSnapshotsTab(getDb());
      await reportSnapshots(s, [snap(1, "2026-11-20T01:00:00Z")]);
      const target = idOf(1);
      for (const client of [await s.operator(), await s.viewer()]) {
        expect((await client.request(`/hosts/${s.hostId}/snapshots/${target}/forget`)).status).toBe(403);
        expect(
          (await client.form(`/hosts/${s.hostId}/snapshots/${target}/forget`, { confirm: target })).status,
        ).toBe(403);
        expect(
          (await client.json("POST", `/api/hosts/${s.hostId}/snapshots/${target}/forget`, {})).status,
        ).toBe(403);
      }
      // A snapshot in the same (shared) repository but cached for another host.
      const { host: other } = await seedHost(s.deps, { name: "web-2", protocolVersion: 7 });
      const otherAgent = createRecordingConnection(other.id);
      s.deps.hub.register(otherAgent);
      await reportSnapshots(s, [snap(9, "2026-11-20T01:00:00Z")], { hostId: other.id });
      const foreign = await s.admin.json("POST", `/api/hosts/${s.hostId}/snapshots/${idOf(9)}/forget`, {});
      expect(foreign.status).toBe(404);
      expect(await foreign.text()).toContain("is not a snapshot of this host");
      expect((await s.admin.request(`/hosts/${s.hostId}/snapshots/${idOf(9)}/forget`)).status).toBe(404);
      // A prefix could match another host's snapshot in the repository: only the full id is taken.
      const short = await s.admin.json(
        "POST",
        `/api/hosts/${s.hostId}/snapshots/${target.slice(-8)}/forget`,
        {},
      );
      expect(short.status).toBe(404);
      const mismatch = await s.admin.json("POST", `/api/hosts/${s.hostId}/snapshots/${target}/forget`, {
        confirm: "deadbeef",
      });
      expect(mismatch.status).toBe(400);

      // Issue 31: another machine's snapshot in this host's own (shared) repository is listed, but
      // never forgotten from here.
      await reportSnapshots(
        s,
        [{ ...snap(13, "2026-11-20T03:00:00Z"), hostname: "alpha" }, snap(1, "2026-11-20T01:00:00Z")],
        { refreshedAt: "2026-11-21T10:30:00Z" },
      );
      const theirs = await s.admin.json("POST", `/api/hosts/${s.hostId}/snapshots/${idOf(13)}/forget`, {});
      expect(theirs.status).toBe(409);
      expect(await theirs.text()).toContain("made by another machine (alpha)");
      expect(s.agent.frames).toHaveLength(0);

      // An agent of protocol 6 would ignore snapshot_ids: it is never sent, the admin is told why.
      // Its snapshots were made under web-1, one of its own hostnames.
      const { host: oldHost } = await seedHost(s.deps, {
        name: "old-1",
        protocolVersion: 6,
        snapshotHostnames: ["old-1", "web-1"],
      });
      const oldAgent = createRecordingConnection(oldHost.id);
      s.deps.hub.register(oldAgent);
      await reportSnapshots(s, [snap(1, "2026-11-20T01:00:00Z")], { hostId: oldHost.id });
      const refused = await s.admin.json("POST", `/api/hosts/${oldHost.id}/snapshots/${target}/forget`, {});
      expect(refused.status).toBe(409);
      expect(await refused.text()).toContain("needs an agent of protocol 7 or later");
      const page = await (await s.admin.request(`/hosts/${oldHost.id}/snapshots/${target}/forget`)).text();
      expect(page).toContain('data-testid="forget-agent-too-old"');
      const form = await s.admin.form(`/hosts/${oldHost.id}/snapshots/${target}/forget`, {
        _csrf: csrfFrom(page),
        confirm: target.slice(-8),
      });
      expect(form.status).toBe(409);
      expect(await form.text()).toContain("update the agent");
      expect(oldAgent.frames).toHaveLength(0);

      s.deps.hub.unregister(s.agent);
      const offline = await s.admin.json("POST", `/api/hosts/${s.hostId}/snapshots/${target}/forget`, {});
      expect(offline.status).toBe(503);

      expect(s.agent.frames).toHaveLength(0);
      expect(otherAgent.frames).toHaveLength(0);
      expect(await s.deps.db.select().from(jobs).where(eq(jobs.kind, "forget"))).toEqual([]);
      expect(await s.deps.db.select().from(auditLog).where(eq(auditLog.action, "snapshot.forget"))).toEqual(
        [],
      );
    },
    SLOW,
  );
});

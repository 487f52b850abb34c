/**
 * The snapshots tab and its API, in-process, on both engines: the list paged and filtered by tag
 * and source group, the compare form preset to the two newest snapshots of one group, the charts
 * (data added per backup, repository size), a plain page title, and forgetting one snapshot:
 * admin only, typed confirmation, only a snapshot of this host, never to an agent below protocol
 * 7, one command.run naming the snapshot and no policy, audited.
 */
import { auditLog, type Database, jobs, repositorySizes, sourceGroups } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import type { CommandRun } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { ulid } from "ulidx";
import { expect, it } from "vitest";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { createRecordingConnection, type RecordingConnection } from "../testing/recording-connection.js";
import { seedHost, seedJob } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

interface Setup {
  deps: TestDeps;
  admin: TestClient;
  /** Signed in on first use: each user costs a password hash, and the machine may be busy. */
  operator: () => Promise<TestClient>;
  viewer: () => Promise<TestClient>;
  hostId: string;
  agent: RecordingConnection;
}

/** Tests sign in up to three users (password hashing) on a shared CI machine. */
const SLOW = 120_000;

function snap(index: number, time: string, tags: string[] = ["srv"], paths: string[] = ["/srv"]) {
  const id = index.toString(16).padStart(64, "0");
  return {
    id,
    short_id: id.slice(-8),
    time,
    hostname: "web-1",
    paths,
    tags,
    size_bytes: 3 * 1024 * 1024,
    file_count: 1234,
  };
}
const idOf = (index: number) => snap(index, "").id;

async function setup(db: Database): Promise<Setup> {
  const { deps, admin, addUser } = await startSignedInApp({ deps: { db } });
  const signedIn = (username: string, role: "operator" | "viewer") => {
    let client: Promise<TestClient> | undefined;
    return () => {
      client ??= addUser(username, role);
      return client;
    };
  };
  const { host } = await seedHost(deps, { protocolVersion: 7 });
  const agent = createRecordingConnection(host.id);
  deps.hub.register(agent);
  return {
    deps,
    admin,
    operator: signedIn("olga", "operator"),
    viewer: signedIn("looker", "viewer"),
    hostId: host.id,
    agent,
  };
}

async function addGroups(s: Setup, names: string[]) {
  for (const name of names) {
    await s.deps.db
      .insert(sourceGroups)
      .values({ id: ulid(), hostId: s.hostId, name, includes: [`/${name}`] });
  }
}

function titleOf(html: string): string | undefined {
  return /<title>([^<]*)<\/title>/.exec(html)?.[1];
}

function selected(html: string, testid: string): string | undefined {
  const select = new RegExp(`data-testid="${testid}">([\\s\\S]*?)</select>`).exec(html)?.[1] ?? "";
  return /<option value="([^"]*)" selected>/.exec(select)?.[1];
}

function rowIds(html: string): string[] {
  return [...html.matchAll(/data-testid="snapshot-row" data-snapshot-id="([0-9a-f]+)"/g)].map(
    (m) => m[1] ?? "",
  );
}

runDbSuite("snapshots tab", (getDb) => {
  it(
    "lists most recent first with refreshed_at and total, paged by next_before",
    async () => {
      const { admin: viewer, deps, hostId } = await setup(getDb());
      await replaceSnapshots(deps.db, hostId, {
        snapshots: [
          snap(4, "2026-11-20T04:00:00Z"),
          snap(3, "2026-11-20T03:00:00Z"),
          snap(2, "2026-11-20T03:00:00Z"),
          snap(1, "2026-11-20T01:00:00Z"),
        ],
        refreshed_at: "2026-11-21T10:00:00Z",
      });
      const first = await viewer.request(`/api/hosts/${hostId}/snapshots?limit=2`);
      expect(first.status).toBe(200);
      const page1 = (await first.json()) as {
        snapshots: Array<{ id: string; size_bytes: number; file_count: number }>;
        refreshed_at: string;
        total: number;
        next_before: string;
      };
      expect(page1.total).toBe(4);
      expect(page1.refreshed_at).toBe("2026-11-21T10:00:00.000Z");
      expect(page1.snapshots.map((s) => s.id)).toEqual([idOf(4), idOf(3)]);
      expect(page1.snapshots[0]).toMatchObject({
        size_bytes: 3 * 1024 * 1024,
        file_count: 1234,
        tags: ["srv"],
      });
      const second = await viewer.request(
        `/api/hosts/${hostId}/snapshots?limit=2&before=${encodeURIComponent(page1.next_before)}`,
      );
      const page2 = (await second.json()) as { snapshots: Array<{ id: string }>; next_before?: string };
      expect(page2.snapshots.map((s) => s.id)).toEqual([idOf(2), idOf(1)]);
      const third = await viewer.request(
        `/api/hosts/${hostId}/snapshots?limit=2&before=${encodeURIComponent(page2.next_before ?? "")}`,
      );
      expect(((await third.json()) as { snapshots: unknown[] }).snapshots).toEqual([]);
    },
    SLOW,
  );

  it(
    "answers an empty list for a host that never reported, 404 for an unknown host, 400 for a bad cursor",
    async () => {
      const { admin: viewer, hostId } = await setup(getDb());
      const empty = (await (await viewer.request(`/api/hosts/${hostId}/snapshots`)).json()) as object;
      expect(empty).toMatchObject({ snapshots: [], refreshed_at: null, total: 0 });
      expect((await viewer.request("/api/hosts/01JD0000000000000000000000/snapshots")).status).toBe(404);
      expect((await viewer.request(`/api/hosts/${hostId}/snapshots?before=nonsense`)).status).toBe(400);
      expect((await viewer.request(`/api/hosts/${hostId}/snapshots?limit=0`)).status).toBe(400);
    },
    SLOW,
  );

  it(
    "filters by tag and by source group, in the API and on the page, with the pager keeping the filter",
    async () => {
      const s = await setup(getDb());
      await addGroups(s, ["etc", "home"]);
      await replaceSnapshots(s.deps.db, s.hostId, {
        snapshots: [
          snap(6, "2026-11-20T06:00:00Z", ["home"], ["/home"]),
          snap(5, "2026-11-20T05:00:00Z", ["etc", "manual"], ["/etc"]),
          snap(4, "2026-11-20T04:00:00Z", ["home"], ["/home"]),
          snap(3, "2026-11-20T03:00:00Z", ["etc"], ["/etc"]),
          snap(2, "2026-11-20T02:00:00Z", ["etc"], ["/etc"]),
          snap(1, "2026-11-20T01:00:00Z", ["other"], ["/opt"]),
        ],
        refreshed_at: "2026-11-21T10:00:00Z",
      });
      const api = async (query: string) => {
        const res = await s.admin.request(`/api/hosts/${s.hostId}/snapshots?${query}`);
        expect(res.status).toBe(200);
        return (await res.json()) as { snapshots: Array<{ id: string }>; next_before?: string };
      };
      expect((await api("group=etc")).snapshots.map((x) => x.id)).toEqual([idOf(5), idOf(3), idOf(2)]);
      expect((await api("tag=manual")).snapshots.map((x) => x.id)).toEqual([idOf(5)]);
      expect((await api("tag=other")).snapshots.map((x) => x.id)).toEqual([idOf(1)]);
      expect((await api("group=home&tag=manual")).snapshots).toEqual([]);
      expect((await api("group=&tag=")).snapshots).toHaveLength(6);
      // Paging within a filter: the cursor continues the filtered list.
      const firstTwo = await api("group=etc&limit=2");
      expect(firstTwo.snapshots.map((x) => x.id)).toEqual([idOf(5), idOf(3)]);
      const rest = await api(`group=etc&limit=2&before=${encodeURIComponent(firstTwo.next_before ?? "")}`);
      expect(rest.snapshots.map((x) => x.id)).toEqual([idOf(2)]);
      const unknown = await s.admin.request(`/api/hosts/${s.hostId}/snapshots?group=nope`);
      expect(unknown.status).toBe(400);
      expect(await unknown.text()).toContain("group: nope is not a source group of this host");

      const page = await s.admin.request(`/hosts/${s.hostId}/snapshots?group=home`);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(rowIds(html)).toEqual([idOf(6), idOf(4)]);
      expect(selected(html, "filter-group")).toBe("home");
      expect(html).toContain('<option value="manual">manual</option>');
      const paged = await (await s.admin.request(`/hosts/${s.hostId}/snapshots?group=etc&limit=2`)).text();
      expect(paged).toMatch(
        /href="\/hosts\/[0-9A-Z]+\/snapshots\?before=[^"]+&amp;group=etc" data-testid="snapshots-older"/,
      );
      const none = await (await s.admin.request(`/hosts/${s.hostId}/snapshots?tag=absent`)).text();
      expect(none).toContain("No snapshots match this filter.");
    },
    SLOW,
  );

  it(
    "presets the compare form to the two newest snapshots of one group, not the two newest overall",
    async () => {
      const s = await setup(getDb());
      await addGroups(s, ["etc", "home"]);
      await replaceSnapshots(s.deps.db, s.hostId, {
        snapshots: [
          snap(5, "2026-11-20T05:00:00Z", ["home"], ["/home"]),
          snap(4, "2026-11-20T04:00:00Z", ["etc"], ["/etc"]),
          snap(3, "2026-11-20T03:00:00Z", ["etc"], ["/etc"]),
          snap(2, "2026-11-20T02:00:00Z", ["home"], ["/home"]),
          snap(1, "2026-11-20T01:00:00Z", ["etc"], ["/etc"]),
        ],
        refreshed_at: "2026-11-21T10:00:00Z",
      });
      const html = await (await (await s.operator()).request(`/hosts/${s.hostId}/snapshots`)).text();
      // The newest snapshot (home) and the newest older one of the same group.
      expect(selected(html, "diff-b")).toBe(idOf(5));
      expect(selected(html, "diff-a")).toBe(idOf(2));
      // Filtered to etc: the two newest etc snapshots.
      const etc = await (await (await s.operator()).request(`/hosts/${s.hostId}/snapshots?group=etc`)).text();
      expect(selected(etc, "diff-b")).toBe(idOf(4));
      expect(selected(etc, "diff-a")).toBe(idOf(3));

      // The newest snapshot alone in its group: the newest group with two is preset.
      await replaceSnapshots(s.deps.db, s.hostId, {
        snapshots: [
          snap(9, "2026-11-21T09:00:00Z", ["home"], ["/home"]),
          snap(8, "2026-11-21T08:00:00Z", ["etc"], ["/etc"]),
          snap(7, "2026-11-21T07:00:00Z", ["etc"], ["/etc"]),
        ],
        refreshed_at: "2026-11-21T10:00:00Z",
      });
      const alone = await (await (await s.operator()).request(`/hosts/${s.hostId}/snapshots`)).text();
      expect(selected(alone, "diff-b")).toBe(idOf(8));
      expect(selected(alone, "diff-a")).toBe(idOf(7));
    },
    SLOW,
  );

  it(
    "has a plain page title, and charts data added per backup and the repository size, not bytes processed",
    async () => {
      const s = await setup(getDb());
      await replaceSnapshots(s.deps.db, s.hostId, {
        snapshots: [snap(2, "2026-11-20T02:00:00Z"), snap(1, "2026-11-20T01:00:00Z")],
        refreshed_at: "2026-11-21T10:00:00Z",
      });
      for (const day of [1, 2]) {
        await seedJob(
          s.deps,
          { hostId: s.hostId, kind: "backup", actorKind: "system" },
          {
            status: "succeeded",
            startedAt: new Date(Date.UTC(2026, 10, day, 1)),
            finishedAt: new Date(Date.UTC(2026, 10, day, 1, 2)),
            summary: { total_bytes_processed: 5 * 1024 * 1024, data_added: 7 * 1024 },
          },
        );
      }
      const now = s.deps.clock.now();
      for (const [offset, raw] of [
        [2, 10],
        [1, 11],
      ] as const) {
        const day = new Date(now.getTime() - offset * 86_400_000).toISOString().slice(0, 10);
        await s.deps.db.insert(repositorySizes).values({
          hostId: s.hostId,
          day,
          rawSizeBytes: raw * 1024 * 1024,
          totalSizeBytes: 99,
          recordedAt: now,
        });
      }
      for (const client of [await s.viewer(), await s.operator(), s.admin]) {
        const res = await client.request(`/hosts/${s.hostId}/snapshots`);
        expect(res.status).toBe(200);
        const html = await res.text();
        expect(titleOf(html)).toBe("web-1: snapshots · Fleetback");
        expect(html).toContain('data-testid="tab-snapshots" aria-selected="true"');
        expect(html).toContain("3.00 MiB");
        expect(html).toContain(idOf(1).slice(-8));
        expect(html).not.toMatch(/style="/);
        const dataAdded = /data-testid="data-added-chart">([\s\S]*?)<\/figure>/.exec(html)?.[1] ?? "";
        expect(dataAdded.match(/<path class="chart-line"/g)).toHaveLength(1);
        expect(dataAdded).toContain("7.00 KiB");
        expect(dataAdded).not.toContain("5.00 MiB");
        const size = /data-testid="repository-size-chart">([\s\S]*?)<\/figure>/.exec(html)?.[1] ?? "";
        expect(size.match(/<path class="chart-line"/g)).toHaveLength(1);
        expect(size).toContain("11.0 MiB");
        expect(html).not.toContain("5.00 MiB");
      }
    },
    SLOW,
  );

  it(
    "lets an admin forget one snapshot of this host after typing its short id: one forget naming it, no policy, audited",
    async () => {
      const s = await setup(getDb());
      await replaceSnapshots(s.deps.db, s.hostId, {
        snapshots: [snap(2, "2026-11-20T02:00:00Z"), snap(1, "2026-11-20T01:00:00Z")],
        refreshed_at: "2026-11-21T10:00:00Z",
      });
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
      const s = await setup(getDb());
      await replaceSnapshots(s.deps.db, s.hostId, {
        snapshots: [snap(1, "2026-11-20T01:00:00Z")],
        refreshed_at: "2026-11-21T10:00:00Z",
      });
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
      await replaceSnapshots(s.deps.db, other.id, {
        snapshots: [snap(9, "2026-11-20T01:00:00Z")],
        refreshed_at: "2026-11-21T10:00:00Z",
      });
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
      await replaceSnapshots(s.deps.db, s.hostId, {
        snapshots: [
          { ...snap(13, "2026-11-20T03:00:00Z"), hostname: "alpha" },
          snap(1, "2026-11-20T01:00:00Z"),
        ],
        refreshed_at: "2026-11-21T10:30:00Z",
      });
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
      await replaceSnapshots(s.deps.db, oldHost.id, {
        snapshots: [snap(1, "2026-11-20T01:00:00Z")],
        refreshed_at: "2026-11-21T10:00:00Z",
      });
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

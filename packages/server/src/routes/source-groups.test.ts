import { auditLog, hosts, jobs, pendingRuns, sourceGroups } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { queueRetryAfterFailure } from "../retries/transient-failure.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { retryTick } from "../sources/retry-ticker.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

const CANARY = "echo Canary-Hook-4417";

let deps: TestDeps;
let admin: TestClient;
let operator: TestClient;
let viewer: TestClient;
let hostId: string;

beforeEach(async () => {
  const started = await startSignedInApp({
    users: [
      { username: "oper", role: "operator" },
      { username: "looker", role: "viewer" },
    ],
  });
  ({ deps, admin } = started);
  ({ oper: operator, looker: viewer } = started.users);
  hostId = (await seedHost(deps, { name: "db-01" })).host.id;
});
afterEach(async () => {
  await deps.close();
});

const groupsUrl = () => `/api/hosts/${hostId}/source-groups`;
const etc = { name: "etc", includes: ["/etc"], retention_policy: { daily: 7, within: "30d" } };

async function message(res: Response): Promise<string> {
  return ((await res.json()) as { message: string }).message;
}

describe("source groups: validation", () => {
  it("refuses each bad field with 400 naming it and writes nothing", async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...etc, includes: ["etc"] }, /^includes\.0: /],
      [{ ...etc, includes: [] }, /^includes: /],
      [{ ...etc, name: "has space" }, /^name: /],
      [{ ...etc, name: "a,b" }, /^name: /],
      [{ ...etc, retention_policy: { forever: 1 } }, /^forever: is not a known field/],
      [{ ...etc, retention_policy: { daily: 0 } }, /^retention_policy\.daily: /],
      [{ ...etc, retention_policy: { within: "soon" } }, /^retention_policy\.within: /],
      [{ ...etc, retry_max: 21 }, /^retry_max: /],
      [{ ...etc, retry_backoff_seconds: 86_401 }, /^retry_backoff_seconds: /],
      [{ ...etc, bandwidth_up_kbps: 0 }, /^bandwidth_up_kbps: /],
      [{ ...etc, bandwidth_down_kbps: 1.5 }, /^bandwidth_down_kbps: /],
      [{ ...etc, bandwidth_up_kbps: "512" }, /^bandwidth_up_kbps: /],
    ];
    for (const [body, pattern] of cases) {
      const res = await operator.json("POST", groupsUrl(), body);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
      expect(await message(res)).toMatch(pattern);
    }
    expect(await deps.db.select().from(sourceGroups)).toEqual([]);
  });

  it("refuses an include in the agent's own directories, also those its hello named, on create and edit (issue 33)", async () => {
    await deps.db
      .update(hosts)
      .set({ agentDirs: ["/srv/fleetback-state"] })
      .where(eq(hosts.id, hostId));
    for (const [path, dir] of [
      ["/etc/fleetback-agent", "/etc/fleetback-agent"],
      ["/etc/fleetback-agent/agent.json", "/etc/fleetback-agent"],
      ["/var/lib/fleetback-agent/", "/var/lib/fleetback-agent"],
      ["/opt/fleetback-agent", "/opt/fleetback-agent"],
      ["/srv/../etc/fleetback-agent", "/etc/fleetback-agent"],
      ["/srv/fleetback-state/update", "/srv/fleetback-state"],
    ] as const) {
      const res = await operator.json("POST", groupsUrl(), { ...etc, includes: ["/srv/www", path] });
      expect(res.status, path).toBe(400);
      expect(await message(res), path).toBe(
        `includes: ${path} is the agent's own directory ${dir} or lies inside it, which holds the host's agent token and is never backed up, restored, listed or downloaded`,
      );
    }
    expect(await deps.db.select().from(sourceGroups)).toEqual([]);
    // A folder above them stays allowed: the agent excludes its own directories from every backup.
    const created = await operator.json("POST", groupsUrl(), { ...etc, includes: ["/", "/etc", "/srv"] });
    expect(created.status).toBe(201);
    const { source_group } = (await created.json()) as { source_group: { id: string } };
    const edit = await operator.json("PUT", `${groupsUrl()}/${source_group.id}`, {
      includes: ["/etc/fleetback-agent"],
    });
    expect(edit.status).toBe(400);
    expect(await message(edit)).toMatch(/^includes: \/etc\/fleetback-agent is the agent's own directory/);
    const [group] = await deps.db.select().from(sourceGroups);
    expect(group?.includes).toEqual(["/", "/etc", "/srv"]);
  });

  it("answers 409 naming name for a duplicate, on create and on rename", async () => {
    expect((await operator.json("POST", groupsUrl(), etc)).status).toBe(201);
    const dup = await operator.json("POST", groupsUrl(), { ...etc, includes: ["/srv"] });
    expect(dup.status).toBe(409);
    expect(await message(dup)).toMatch(/^name: /);
    const other = (await (
      await operator.json("POST", groupsUrl(), { name: "srv", includes: ["/srv"] })
    ).json()) as {
      source_group: { id: string };
    };
    const rename = await operator.json("PUT", `${groupsUrl()}/${other.source_group.id}`, { name: "etc" });
    expect(rename.status).toBe(409);
    expect(await deps.db.select().from(sourceGroups)).toHaveLength(2);
  });

  it("lets a viewer read but not write", async () => {
    expect((await viewer.json("POST", groupsUrl(), etc)).status).toBe(403);
    expect((await viewer.request(groupsUrl())).status).toBe(200);
  });
});

describe("source groups: CRUD and conflicts", () => {
  it("creates, reads, edits, recomputes conflict_dimension for all groups, and deletes", async () => {
    const created = await operator.json("POST", groupsUrl(), etc);
    expect(created.status).toBe(201);
    const { source_group: group } = (await created.json()) as { source_group: Record<string, unknown> };
    expect(group).toMatchObject({
      name: "etc",
      includes: ["/etc"],
      excludes: [],
      retention_policy: { daily: 7, within: "30d" },
      retry_max: 3,
      retry_backoff_seconds: 300,
      conflict_dimension: null,
      has_pre_hook: false,
    });
    const nginx = (await (
      await operator.json("POST", groupsUrl(), { name: "nginx", includes: ["/srv/www", "/etc/nginx"] })
    ).json()) as { source_group: { id: string; conflict_dimension: string } };
    expect(nginx.source_group.conflict_dimension).toBe("/etc/nginx");
    const read = (await (await viewer.request(`${groupsUrl()}/${String(group.id)}`)).json()) as {
      source_group: { conflict_dimension: string };
    };
    expect(read.source_group.conflict_dimension).toBe("/etc");

    const edited = await operator.json("PUT", `${groupsUrl()}/${nginx.source_group.id}`, {
      includes: ["/srv/www"],
      excludes: ["*.tmp"],
    });
    expect(edited.status).toBe(200);
    const list = (await (await viewer.request(groupsUrl())).json()) as {
      source_groups: Array<{ name: string; conflict_dimension: string | null; excludes: string[] }>;
    };
    expect(list.source_groups.map((g) => [g.name, g.conflict_dimension])).toEqual([
      ["etc", null],
      ["nginx", null],
    ]);
    expect((await operator.json("DELETE", `${groupsUrl()}/${String(group.id)}`)).status).toBe(204);
    expect(await deps.db.select().from(sourceGroups)).toHaveLength(1);
  });

  it("refuses to delete a group a schedule still fires: 409 with the schedules, nothing deleted", async () => {
    const { source_group: group } = (await (await operator.json("POST", groupsUrl(), etc)).json()) as {
      source_group: { id: string };
    };
    const made = (await (
      await operator.json("POST", `/api/hosts/${hostId}/schedules`, {
        cron: "0 2 * * *",
        enabled: true,
        source_group_ids: [group.id],
      })
    ).json()) as { schedule: { id: string } };
    const res = await operator.json("DELETE", `${groupsUrl()}/${group.id}`);
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({
      code: "conflict",
      details: { schedules: [{ id: made.schedule.id, cron: "0 2 * * *" }] },
    });
    expect(await deps.db.select().from(sourceGroups)).toHaveLength(1);
  });
});

describe("hooks", () => {
  it("are admin-only: never shown to others, refused from others, audited by name only", async () => {
    const refused = await operator.json("POST", groupsUrl(), { ...etc, pre_hook: CANARY });
    expect(refused.status).toBe(403);
    const created = await admin.json("POST", groupsUrl(), { ...etc, pre_hook: CANARY });
    expect(created.status).toBe(201);
    const adminView = await created.text();
    expect(adminView).toContain(CANARY);
    const { source_group: group } = JSON.parse(adminView) as { source_group: { id: string } };
    expect((await operator.json("PUT", `${groupsUrl()}/${group.id}`, { post_hook: null })).status).toBe(403);
    expect((await operator.json("PUT", `/api/hosts/${hostId}/hooks`, { pre_hook_default: "x" })).status).toBe(
      403,
    );
    const hooks = await admin.json("PUT", `/api/hosts/${hostId}/hooks`, {
      pre_hook_default: `${CANARY}-default`,
    });
    expect(await hooks.json()).toEqual({ has_pre_hook_default: true, has_post_hook_default: false });

    const surfaces = [
      await (await operator.request(groupsUrl())).text(),
      await (await viewer.request(`${groupsUrl()}/${group.id}`)).text(),
      await (await operator.request(`/hosts/${hostId}/sources`)).text(),
      await (await operator.json("PUT", `${groupsUrl()}/${group.id}`, { excludes: ["x"] })).text(),
      JSON.stringify(await deps.db.select().from(auditLog)),
      deps.logLines.join("\n"),
    ];
    expect(surfaces[0]).toContain('"has_pre_hook":true');
    for (const surface of surfaces) {
      expect(surface).not.toContain("Canary-Hook");
    }
    const [row] = await deps.db.select().from(sourceGroups);
    expect(Buffer.from(row?.preHook ?? []).toString("latin1")).not.toContain("Canary-Hook");
    expect(await (await admin.request(`/hosts/${hostId}/sources`)).text()).toContain(CANARY);
  });
});

describe("run now", () => {
  it("sends command.run with the group's paths, tag and hooks when online; records params without hooks", async () => {
    await admin.json("PUT", `/api/hosts/${hostId}/hooks`, { post_hook_default: CANARY });
    const { source_group: group } = (await (
      await admin.json("POST", groupsUrl(), { ...etc, excludes: ["*.bak"], pre_hook: "sync" })
    ).json()) as { source_group: { id: string } };
    const agent = createRecordingConnection(hostId);
    deps.hub.register(agent);
    const res = await operator.json("POST", `${groupsUrl()}/${group.id}/run`);
    expect(res.status).toBe(201);
    const { job_id } = (await res.json()) as { job_id: string };
    expect(agent.frames.map((f) => f.type)).toEqual(["command.run"]);
    expect(agent.frames[0]?.payload).toEqual({
      job_id,
      kind: "backup",
      requires_admin_creds: false,
      includes: ["/etc"],
      excludes: ["*.bak"],
      tag: "etc",
      pre_hook: "sync",
      post_hook: CANARY,
    });
    const [job] = await deps.db.select().from(jobs).where(eq(jobs.id, job_id));
    expect(job).toMatchObject({ actorKind: "user", sourceGroupId: group.id, kind: "backup" });
    expect(job?.params).toEqual({ tag: "etc", includes: ["/etc"], excludes: ["*.bak"] });
  });

  it("queues a pending run when the host is offline (202), shown on the page; 503 with no retries", async () => {
    const { source_group: group } = (await (await operator.json("POST", groupsUrl(), etc)).json()) as {
      source_group: { id: string };
    };
    const res = await operator.json("POST", `${groupsUrl()}/${group.id}/run`);
    expect(res.status).toBe(202);
    const { pending_run_id } = (await res.json()) as { pending_run_id: string };
    const [row] = await deps.db.select().from(pendingRuns);
    expect(row).toMatchObject({ id: pending_run_id, attempt: 0, actorKind: "user", sourceGroupId: group.id });
    expect(row?.nextAttemptAt.getTime()).toBe(deps.clock.now().getTime() + 300_000);
    expect(await deps.db.select().from(jobs)).toEqual([]);
    const page = await (await viewer.request(`/hosts/${hostId}/sources`)).text();
    expect(page).toContain('data-testid="pending-runs"');

    await operator.json("PUT", `${groupsUrl()}/${group.id}`, { retry_max: 0 });
    expect((await operator.json("POST", `${groupsUrl()}/${group.id}/run`)).status).toBe(503);
  });
});

describe("bandwidth caps of a source group (issue 18)", () => {
  it("are stored, shown, sent as the stricter of the group's and the host's cap, and recorded on the job", async () => {
    const created = await operator.json("POST", groupsUrl(), { ...etc, bandwidth_up_kbps: 512 });
    expect(created.status).toBe(201);
    const { source_group: group } = (await created.json()) as {
      source_group: { id: string; bandwidth_up_kbps: number | null; bandwidth_down_kbps: number | null };
    };
    expect(group).toMatchObject({ bandwidth_up_kbps: 512, bandwidth_down_kbps: null });
    const agent = createRecordingConnection(hostId);
    deps.hub.register(agent);
    const runOnce = async () => {
      const before = agent.frames.length;
      const res = await operator.json("POST", `${groupsUrl()}/${group.id}/run`);
      expect(res.status).toBe(201);
      const { job_id } = (await res.json()) as { job_id: string };
      const [job] = await deps.db.select().from(jobs).where(eq(jobs.id, job_id));
      return { job_id, payload: agent.frames[before]?.payload as Record<string, unknown>, job };
    };

    // No host cap: the group's own.
    let run = await runOnce();
    expect(run.payload).toMatchObject({ bandwidth_up_kbps: 512 });
    expect(run.payload).not.toHaveProperty("bandwidth_down_kbps");
    expect(run.job?.params).toMatchObject({ bandwidth_up_kbps: 512 });
    const jobPage = await (await viewer.request(`/jobs/${run.job_id}`)).text();
    expect(jobPage).toContain("upload capped at 512 KiB/s");

    // A stricter host cap wins; a looser one does not lift the group's.
    expect(
      (await operator.json("PUT", `/api/hosts/${hostId}/bandwidth`, { up_kbps: 100, down_kbps: 50 })).status,
    ).toBe(200);
    run = await runOnce();
    expect(run.payload).toMatchObject({ bandwidth_up_kbps: 100 });
    // The group has no download cap: the command carries none and the agent keeps the host's.
    expect(run.payload).not.toHaveProperty("bandwidth_down_kbps");
    await operator.json("PUT", `/api/hosts/${hostId}/bandwidth`, { up_kbps: 4096, down_kbps: null });
    run = await runOnce();
    expect(run.payload).toMatchObject({ bandwidth_up_kbps: 512 });

    // Cleared with null: the command carries no cap of the group's.
    const cleared = await operator.json("PUT", `${groupsUrl()}/${group.id}`, { bandwidth_up_kbps: null });
    expect(
      ((await cleared.json()) as { source_group: { bandwidth_up_kbps: null } }).source_group
        .bandwidth_up_kbps,
    ).toBeNull();
    run = await runOnce();
    expect(run.payload).not.toHaveProperty("bandwidth_up_kbps");
    expect(run.job?.params).not.toHaveProperty("bandwidth_up_kbps");
  });

  it("are set from the page form, where empty means none and 0 is refused naming the field", async () => {
    const page = await (await operator.request(`/hosts/${hostId}/sources`)).text();
    expect(page).toContain('name="bandwidth_up_kbps"');
    const csrf = csrfFrom(page);
    const fields = { _csrf: csrf, name: "web", includes: "/srv/www", excludes: "" };
    const bad = await operator.form(
      `/hosts/${hostId}/source-groups`,
      { ...fields, bandwidth_up_kbps: "0", bandwidth_down_kbps: "" },
      { "HX-Request": "true" },
    );
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/^bandwidth_up_kbps: /);
    const ok = await operator.form(`/hosts/${hostId}/source-groups`, {
      ...fields,
      bandwidth_up_kbps: "",
      bandwidth_down_kbps: "2048",
    });
    expect(ok.status).toBe(303);
    const [row] = await deps.db.select().from(sourceGroups);
    expect(row).toMatchObject({ bandwidthUpKbps: null, bandwidthDownKbps: 2048 });
    expect(await (await viewer.request(`/hosts/${hostId}/sources`)).text()).toContain(
      "download ≤ 2048 KiB/s",
    );
  });
});

describe("a run-now's own bandwidth caps (issue 18)", () => {
  it("replace the group's cap for that run only, never lift the host's, and ride along a queued run and its retry", async () => {
    const { source_group: group } = (await (
      await operator.json("POST", groupsUrl(), { ...etc, bandwidth_up_kbps: 512, retry_max: 2 })
    ).json()) as { source_group: { id: string } };
    const runUrl = `${groupsUrl()}/${group.id}/run`;
    const bad = await operator.json("POST", runUrl, { bandwidth_up_kbps: 0 });
    expect(bad.status).toBe(400);
    expect(await message(bad)).toMatch(/^bandwidth_up_kbps: /);
    expect(await message(await operator.json("POST", runUrl, { up: 5 }))).toMatch(/^up: /);

    // Offline: the run is queued with its caps, and the retry sends them.
    const queued = await operator.json("POST", runUrl, { bandwidth_up_kbps: 64, bandwidth_down_kbps: 32 });
    expect(queued.status).toBe(202);
    const [pending] = await deps.db.select().from(pendingRuns);
    expect(pending).toMatchObject({ bandwidthUpKbps: 64, bandwidthDownKbps: 32 });
    const agent = createRecordingConnection(hostId);
    deps.hub.register(agent);
    deps.clock.advance(3_600_000);
    expect((await retryTick(deps, deps.clock.now())).dispatched).toEqual([pending?.id]);
    expect(agent.frames.at(-1)?.payload).toMatchObject({ bandwidth_up_kbps: 64, bandwidth_down_kbps: 32 });
    const retried = String((agent.frames.at(-1)?.payload as { job_id?: string } | undefined)?.job_id);
    const [retriedJob] = await deps.db.select().from(jobs).where(eq(jobs.id, retried));
    expect(retriedJob?.params).toMatchObject({ run_caps: { up_kbps: 64, down_kbps: 32 }, retry: 1 });

    // A transient failure of that job queues another retry under the same caps.
    await deps.db
      .update(jobs)
      .set({ status: "failed", exitCode: 1, error: "repository is already locked" })
      .where(eq(jobs.id, retried));
    await queueRetryAfterFailure(deps, retried);
    const [again] = await deps.db.select().from(pendingRuns);
    expect(again).toMatchObject({ bandwidthUpKbps: 64, bandwidthDownKbps: 32, lastJobId: retried });
    await deps.db.delete(pendingRuns);

    // Online, with a host cap of 100 up: a run cap above it is held to it; no body keeps the group's.
    await operator.json("PUT", `/api/hosts/${hostId}/bandwidth`, { up_kbps: 100, down_kbps: null });
    const sentWith = async (body?: Record<string, unknown>) => {
      const res = await operator.json("POST", runUrl, body);
      expect(res.status).toBe(201);
      const { job_id } = (await res.json()) as { job_id: string };
      const [job] = await deps.db.select().from(jobs).where(eq(jobs.id, job_id));
      return { payload: agent.frames.at(-1)?.payload as Record<string, unknown>, job, job_id };
    };
    let run = await sentWith({ bandwidth_up_kbps: 4096 });
    expect(run.payload).toMatchObject({ bandwidth_up_kbps: 100 });
    run = await sentWith({ bandwidth_up_kbps: 10, bandwidth_down_kbps: 20 });
    expect(run.payload).toMatchObject({ bandwidth_up_kbps: 10, bandwidth_down_kbps: 20 });
    expect(await (await viewer.request(`/jobs/${run.job_id}`)).text()).toContain("this run's own cap");
    run = await sentWith();
    expect(run.payload).toMatchObject({ bandwidth_up_kbps: 100 });
    expect(run.job?.params).not.toHaveProperty("run_caps");

    // The page's "Run now with a cap" form; its plain Run now sends no caps.
    const page = await (await operator.request(`/hosts/${hostId}/sources`)).text();
    expect(page).toContain('data-testid="run-capped-etc"');
    const csrf = csrfFrom(page);
    const formUrl = `/hosts/${hostId}/source-groups/${group.id}/run`;
    const refused = await operator.form(
      formUrl,
      { _csrf: csrf, bandwidth_up_kbps: "0" },
      { "HX-Request": "true" },
    );
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/^bandwidth_up_kbps: /);
    const capped = await operator.form(formUrl, {
      _csrf: csrf,
      bandwidth_up_kbps: "",
      bandwidth_down_kbps: "7",
    });
    expect(capped.status).toBe(303);
    expect(agent.frames.at(-1)?.payload).toMatchObject({ bandwidth_up_kbps: 100, bandwidth_down_kbps: 7 });
    const audits = await deps.db.select().from(auditLog).where(eq(auditLog.action, "source_group.run"));
    expect(audits.at(-1)?.details).toMatchObject({ run_caps: { up_kbps: null, down_kbps: 7 } });
  });
});

describe("Run now from the sources page (issue 17)", () => {
  it("opens the backup's live job page; a queued run stays on the sources page and says so", async () => {
    const { source_group: group } = (await (await operator.json("POST", groupsUrl(), etc)).json()) as {
      source_group: { id: string };
    };
    const csrf = csrfFrom(await (await operator.request(`/hosts/${hostId}/sources`)).text());
    const runUrl = `/hosts/${hostId}/source-groups/${group.id}/run`;

    const queued = await operator.form(runUrl, { _csrf: csrf }, { "HX-Request": "true" });
    expect(queued.status).toBe(204);
    const [pending] = await deps.db.select().from(pendingRuns);
    expect(queued.headers.get("HX-Redirect")).toBe(`/hosts/${hostId}/sources?queued=${pending?.id}`);
    const queuedPage = await (await operator.request(queued.headers.get("HX-Redirect") ?? "")).text();
    expect(queuedPage).toContain('data-testid="run-queued"');
    await deps.db.delete(pendingRuns);

    deps.hub.register(createRecordingConnection(hostId));
    const viaHtmx = await operator.form(runUrl, { _csrf: csrf }, { "HX-Request": "true" });
    expect(viaHtmx.status).toBe(204);
    const [first] = await deps.db.select().from(jobs);
    expect(viaHtmx.headers.get("HX-Redirect")).toBe(`/jobs/${first?.id}`);

    await deps.db.update(jobs).set({ status: "succeeded" });
    const plain = await operator.form(runUrl, { _csrf: csrf });
    expect(plain.status).toBe(303);
    const [second] = (await deps.db.select().from(jobs)).filter((job) => job.id !== first?.id);
    expect(plain.headers.get("Location")).toBe(`/jobs/${second?.id}`);
    expect((await operator.request(plain.headers.get("Location") ?? "")).status).toBe(200);
  });
});

describe("sources page", () => {
  it("renders the tabs, groups and schedule version, and creates a group from the form", async () => {
    const page = await (await operator.request(`/hosts/${hostId}/sources`)).text();
    expect(page).toContain('data-testid="tab-sources" aria-selected="true"');
    expect(page).toContain("Agent has version 0 of 0");
    const csrf = csrfFrom(page);
    const bad = await operator.form(
      `/hosts/${hostId}/source-groups`,
      { _csrf: csrf, name: "web", includes: "relative/path", excludes: "" },
      { "HX-Request": "true" },
    );
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/^includes\.0: /);
    const ok = await operator.form(`/hosts/${hostId}/source-groups`, {
      _csrf: csrf,
      name: "web",
      includes: "/srv/www\n/etc/nginx\n",
      excludes: "*.log",
      keep_daily: "7",
      keep_within: "1y6m",
      retry_max: "2",
      retry_backoff_seconds: "60",
    });
    expect(ok.status).toBe(303);
    const [row] = await deps.db.select().from(sourceGroups);
    expect(row).toMatchObject({
      name: "web",
      includes: ["/srv/www", "/etc/nginx"],
      excludes: ["*.log"],
      retentionPolicy: { daily: 7, within: "1y6m" },
      retryMax: 2,
      retryBackoffSeconds: 60,
    });
    const after = await (await viewer.request(`/hosts/${hostId}/sources`)).text();
    expect(after).toContain('data-testid="group-web"');
    const hook = await operator.form(`/hosts/${hostId}/source-groups/${row?.id}`, {
      _csrf: csrf,
      name: "web",
      includes: "/srv",
      pre_hook: "x",
    });
    expect(hook.status).toBe(403);
  });
});

describe("source groups: retention that destroys history (issue 13)", () => {
  async function snapshotTagged(tag: string) {
    await replaceSnapshots(deps.db, hostId, {
      refreshed_at: "2026-11-21T11:00:00Z",
      snapshots: [
        {
          id: "a".repeat(64),
          short_id: "aaaaaaaa",
          time: "2026-11-21T10:00:00Z",
          hostname: "db-01",
          paths: ["/etc"],
          tags: [tag],
          size_bytes: 1,
          file_count: 1,
        },
      ],
    });
  }
  const auditOf = async (action: string) =>
    (await deps.db.select().from(auditLog)).filter((row) => row.action === action);

  it("an operator cannot lower a policy (403, nothing changed); raising is fine; an admin may, audited old → new", async () => {
    const created = (await (await operator.json("POST", groupsUrl(), etc)).json()) as {
      source_group: { id: string };
    };
    const url = `${groupsUrl()}/${created.source_group.id}`;
    for (const retention_policy of [
      { daily: 1, within: "30d" },
      { daily: 7, within: "1d" },
      { daily: 7 },
      { last: 1 },
    ]) {
      const res = await operator.json("PUT", url, { retention_policy });
      expect(res.status, JSON.stringify(retention_policy)).toBe(403);
      expect(await message(res)).toMatch(/^retention_policy: lowering keep .*only an admin/);
    }
    const [row] = await deps.db
      .select()
      .from(sourceGroups)
      .where(eq(sourceGroups.id, created.source_group.id));
    expect(row?.retentionPolicy).toEqual({ daily: 7, within: "30d" });
    // Keeping more, or adding a key, destroys nothing.
    const raised = await operator.json("PUT", url, {
      retention_policy: { daily: 14, within: "1y", last: 3 },
    });
    expect(raised.status).toBe(200);

    const lowered = await admin.json("PUT", url, { retention_policy: { last: 1 } });
    expect(lowered.status).toBe(200);
    const updates = await auditOf("source_group.update");
    expect(updates.at(-1)?.details).toMatchObject({
      retention_policy: {
        from: { daily: 14, within: "1y", last: 3 },
        to: { last: 1 },
        lowered: ["last", "daily", "within"],
      },
    });
    expect(updates.at(-2)?.details).toMatchObject({
      retention_policy: {
        from: { daily: 7, within: "30d" },
        to: { daily: 14, within: "1y", last: 3 },
        lowered: [],
      },
    });
  });

  it("a first policy for a tag that has snapshots, on create or by renaming, is a lowering too", async () => {
    await snapshotTagged("db");
    const fresh = await operator.json("POST", groupsUrl(), { ...etc, name: "web" });
    expect(fresh.status).toBe(201); // no snapshots of tag web: nothing to destroy
    const onto = await operator.json("POST", groupsUrl(), { ...etc, name: "db" });
    expect(onto.status).toBe(403);
    const { source_group: web } = (await fresh.json()) as { source_group: { id: string } };
    const renamed = await operator.json("PUT", `${groupsUrl()}/${web.id}`, { name: "db" });
    expect(renamed.status).toBe(403);
    const keepAll = await operator.json("POST", groupsUrl(), { name: "db", includes: ["/db"] });
    expect(keepAll.status).toBe(201);
    const { source_group: db } = (await keepAll.json()) as { source_group: { id: string } };
    expect(
      (await operator.json("PUT", `${groupsUrl()}/${db.id}`, { retention_policy: { last: 1 } })).status,
    ).toBe(403);
    expect(
      (await admin.json("PUT", `${groupsUrl()}/${db.id}`, { retention_policy: { last: 1 } })).status,
    ).toBe(200);
  });

  it("the page form is refused the same way", async () => {
    const created = (await (await operator.json("POST", groupsUrl(), etc)).json()) as {
      source_group: { id: string };
    };
    const page = await operator.request(`/hosts/${hostId}/sources`);
    const body = new URLSearchParams({
      _csrf: csrfFrom(await page.text()),
      name: "etc",
      includes: "/etc",
      keep_last: "1",
    });
    const res = await operator.request(`/hosts/${hostId}/source-groups/${created.source_group.id}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Origin: new URL(deps.config.baseUrl).origin,
      },
      body: body.toString(),
    });
    expect(res.status).toBe(403);
    const [row] = await deps.db
      .select()
      .from(sourceGroups)
      .where(eq(sourceGroups.id, created.source_group.id));
    expect(row?.retentionPolicy).toEqual({ daily: 7, within: "30d" });
  });
});

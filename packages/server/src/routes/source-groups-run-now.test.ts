/**
 * Running a source group now: the command sent with the group's paths, tag, hooks and bandwidth
 * caps (the group's, the host's and the run's own, the strictest winning), a pending run queued
 * for an offline host and its retry, and the sources page's Run now button.
 */
import { auditLog, jobs, pendingRuns, sourceGroups } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queueRetryAfterFailure } from "../retries/transient-failure.js";
import { retryTick } from "../sources/retry-ticker.js";
import { csrfFrom, messageOf } from "../testing/http.js";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { ETC_GROUP, HOOK_CANARY, sourceGroupsHostPerTest } from "../testing/source-groups-host.js";

const s = sourceGroupsHostPerTest();

describe("run now", () => {
  it("sends command.run with the group's paths, tag and hooks when online; records params without hooks", async () => {
    await s.admin.json("PUT", `/api/hosts/${s.hostId}/hooks`, { post_hook_default: HOOK_CANARY });
    const { source_group: group } = (await (
      await s.admin.json("POST", s.groupsUrl(), { ...ETC_GROUP, excludes: ["*.bak"], pre_hook: "sync" })
    ).json()) as { source_group: { id: string } };
    const agent = createRecordingConnection(s.hostId);
    s.deps.hub.register(agent);
    const res = await s.operator.json("POST", `${s.groupsUrl()}/${group.id}/run`);
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
      post_hook: HOOK_CANARY,
    });
    const [job] = await s.deps.db.select().from(jobs).where(eq(jobs.id, job_id));
    expect(job).toMatchObject({ actorKind: "user", sourceGroupId: group.id, kind: "backup" });
    expect(job?.params).toEqual({ tag: "etc", includes: ["/etc"], excludes: ["*.bak"] });
  });

  it("queues a pending run when the host is offline (202), shown on the page; 503 with no retries", async () => {
    const { source_group: group } = (await (
      await s.operator.json("POST", s.groupsUrl(), ETC_GROUP)
    ).json()) as {
      source_group: { id: string };
    };
    const res = await s.operator.json("POST", `${s.groupsUrl()}/${group.id}/run`);
    expect(res.status).toBe(202);
    const { pending_run_id } = (await res.json()) as { pending_run_id: string };
    const [row] = await s.deps.db.select().from(pendingRuns);
    expect(row).toMatchObject({ id: pending_run_id, attempt: 0, actorKind: "user", sourceGroupId: group.id });
    expect(row?.nextAttemptAt.getTime()).toBe(s.deps.clock.now().getTime() + 300_000);
    expect(await s.deps.db.select().from(jobs)).toEqual([]);
    const page = await (await s.viewer.request(`/hosts/${s.hostId}/sources`)).text();
    expect(page).toContain('data-testid="pending-runs"');

    await s.operator.json("PUT", `${s.groupsUrl()}/${group.id}`, { retry_max: 0 });
    expect((await s.operator.json("POST", `${s.groupsUrl()}/${group.id}/run`)).status).toBe(503);
  });
});

describe("bandwidth caps of a source group (issue 18)", () => {
  it("are stored, shown, sent as the stricter of the group's and the host's cap, and recorded on the job", async () => {
    const created = await s.operator.json("POST", s.groupsUrl(), { ...ETC_GROUP, bandwidth_up_kbps: 512 });
    expect(created.status).toBe(201);
    const { source_group: group } = (await created.json()) as {
      source_group: { id: string; bandwidth_up_kbps: number | null; bandwidth_down_kbps: number | null };
    };
    expect(group).toMatchObject({ bandwidth_up_kbps: 512, bandwidth_down_kbps: null });
    const agent = createRecordingConnection(s.hostId);
    s.deps.hub.register(agent);
    const runOnce = async () => {
      const before = agent.frames.length;
      const res = await s.operator.json("POST", `${s.groupsUrl()}/${group.id}/run`);
      expect(res.status).toBe(201);
      const { job_id } = (await res.json()) as { job_id: string };
      const [job] = await s.deps.db.select().from(jobs).where(eq(jobs.id, job_id));
      return { job_id, payload: agent.frames[before]?.payload as Record<string, unknown>, job };
    };

    // No host cap: the group's own.
    let run = await runOnce();
    expect(run.payload).toMatchObject({ bandwidth_up_kbps: 512 });
    expect(run.payload).not.toHaveProperty("bandwidth_down_kbps");
    expect(run.job?.params).toMatchObject({ bandwidth_up_kbps: 512 });
    const jobPage = await (await s.viewer.request(`/jobs/${run.job_id}`)).text();
    expect(jobPage).toContain("upload capped at 512 KiB/s");

    // A stricter host cap wins; a looser one does not lift the group's.
    expect(
      (await s.operator.json("PUT", `/api/hosts/${s.hostId}/bandwidth`, { up_kbps: 100, down_kbps: 50 }))
        .status,
    ).toBe(200);
    run = await runOnce();
    expect(run.payload).toMatchObject({ bandwidth_up_kbps: 100 });
    // The group has no download cap: the command carries none and the agent keeps the host's.
    expect(run.payload).not.toHaveProperty("bandwidth_down_kbps");
    await s.operator.json("PUT", `/api/hosts/${s.hostId}/bandwidth`, { up_kbps: 4096, down_kbps: null });
    run = await runOnce();
    expect(run.payload).toMatchObject({ bandwidth_up_kbps: 512 });

    // Cleared with null: the command carries no cap of the group's.
    const cleared = await s.operator.json("PUT", `${s.groupsUrl()}/${group.id}`, { bandwidth_up_kbps: null });
    expect(
      ((await cleared.json()) as { source_group: { bandwidth_up_kbps: null } }).source_group
        .bandwidth_up_kbps,
    ).toBeNull();
    run = await runOnce();
    expect(run.payload).not.toHaveProperty("bandwidth_up_kbps");
    expect(run.job?.params).not.toHaveProperty("bandwidth_up_kbps");
  });

  it("are set from the page form, where empty means none and 0 is refused naming the field", async () => {
    const page = await (await s.operator.request(`/hosts/${s.hostId}/sources`)).text();
    expect(page).toContain('name="bandwidth_up_kbps"');
    const csrf = csrfFrom(page);
    const fields = { _csrf: csrf, name: "web", includes: "/srv/www", excludes: "" };
    const bad = await s.operator.form(
      `/hosts/${s.hostId}/source-groups`,
      { ...fields, bandwidth_up_kbps: "0", bandwidth_down_kbps: "" },
      { "HX-Request": "true" },
    );
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/^bandwidth_up_kbps: /);
    const ok = await s.operator.form(`/hosts/${s.hostId}/source-groups`, {
      ...fields,
      bandwidth_up_kbps: "",
      bandwidth_down_kbps: "2048",
    });
    expect(ok.status).toBe(303);
    const [row] = await s.deps.db.select().from(sourceGroups);
    expect(row).toMatchObject({ bandwidthUpKbps: null, bandwidthDownKbps: 2048 });
    expect(await (await s.viewer.request(`/hosts/${s.hostId}/sources`)).text()).toContain(
      "download ≤ 2048 KiB/s",
    );
  });
});

describe("a run-now's own bandwidth caps (issue 18)", () => {
  it("replace the group's cap for that run only, never lift the host's, and ride along a queued run and its retry", async () => {
    const { source_group: group } = (await (
      await s.operator.json("POST", s.groupsUrl(), { ...ETC_GROUP, bandwidth_up_kbps: 512, retry_max: 2 })
    ).json()) as { source_group: { id: string } };
    const runUrl = `${s.groupsUrl()}/${group.id}/run`;
    const bad = await s.operator.json("POST", runUrl, { bandwidth_up_kbps: 0 });
    expect(bad.status).toBe(400);
    expect(await messageOf(bad)).toMatch(/^bandwidth_up_kbps: /);
    expect(await messageOf(await s.operator.json("POST", runUrl, { up: 5 }))).toMatch(/^up: /);

    // Offline: the run is queued with its caps, and the retry sends them.
    const queued = await s.operator.json("POST", runUrl, { bandwidth_up_kbps: 64, bandwidth_down_kbps: 32 });
    expect(queued.status).toBe(202);
    const [pending] = await s.deps.db.select().from(pendingRuns);
    expect(pending).toMatchObject({ bandwidthUpKbps: 64, bandwidthDownKbps: 32 });
    const agent = createRecordingConnection(s.hostId);
    s.deps.hub.register(agent);
    s.deps.clock.advance(3_600_000);
    expect((await retryTick(s.deps, s.deps.clock.now())).dispatched).toEqual([pending?.id]);
    expect(agent.frames.at(-1)?.payload).toMatchObject({ bandwidth_up_kbps: 64, bandwidth_down_kbps: 32 });
    const retried = String((agent.frames.at(-1)?.payload as { job_id?: string } | undefined)?.job_id);
    const [retriedJob] = await s.deps.db.select().from(jobs).where(eq(jobs.id, retried));
    expect(retriedJob?.params).toMatchObject({ run_caps: { up_kbps: 64, down_kbps: 32 }, retry: 1 });

    // A transient failure of that job queues another retry under the same caps.
    await s.deps.db
      .update(jobs)
      .set({ status: "failed", exitCode: 1, error: "repository is already locked" })
      .where(eq(jobs.id, retried));
    await queueRetryAfterFailure(s.deps, retried);
    const [again] = await s.deps.db.select().from(pendingRuns);
    expect(again).toMatchObject({ bandwidthUpKbps: 64, bandwidthDownKbps: 32, lastJobId: retried });
    await s.deps.db.delete(pendingRuns);

    // Online, with a host cap of 100 up: a run cap above it is held to it; no body keeps the group's.
    await s.operator.json("PUT", `/api/hosts/${s.hostId}/bandwidth`, { up_kbps: 100, down_kbps: null });
    const sentWith = async (body?: Record<string, unknown>) => {
      const res = await s.operator.json("POST", runUrl, body);
      expect(res.status).toBe(201);
      const { job_id } = (await res.json()) as { job_id: string };
      const [job] = await s.deps.db.select().from(jobs).where(eq(jobs.id, job_id));
      return { payload: agent.frames.at(-1)?.payload as Record<string, unknown>, job, job_id };
    };
    let run = await sentWith({ bandwidth_up_kbps: 4096 });
    expect(run.payload).toMatchObject({ bandwidth_up_kbps: 100 });
    run = await sentWith({ bandwidth_up_kbps: 10, bandwidth_down_kbps: 20 });
    expect(run.payload).toMatchObject({ bandwidth_up_kbps: 10, bandwidth_down_kbps: 20 });
    expect(await (await s.viewer.request(`/jobs/${run.job_id}`)).text()).toContain("this run's own cap");
    run = await sentWith();
    expect(run.payload).toMatchObject({ bandwidth_up_kbps: 100 });
    expect(run.job?.params).not.toHaveProperty("run_caps");

    // The page's "Run now with a cap" form; its plain Run now sends no caps.
    const page = await (await s.operator.request(`/hosts/${s.hostId}/sources`)).text();
    expect(page).toContain('data-testid="run-capped-etc"');
    const csrf = csrfFrom(page);
    const formUrl = `/hosts/${s.hostId}/source-groups/${group.id}/run`;
    const refused = await s.operator.form(
      formUrl,
      { _csrf: csrf, bandwidth_up_kbps: "0" },
      { "HX-Request": "true" },
    );
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/^bandwidth_up_kbps: /);
    const capped = await s.operator.form(formUrl, {
      _csrf: csrf,
      bandwidth_up_kbps: "",
      bandwidth_down_kbps: "7",
    });
    expect(capped.status).toBe(303);
    expect(agent.frames.at(-1)?.payload).toMatchObject({ bandwidth_up_kbps: 100, bandwidth_down_kbps: 7 });
    const audits = await s.deps.db.select().from(auditLog).where(eq(auditLog.action, "source_group.run"));
    expect(audits.at(-1)?.details).toMatchObject({ run_caps: { up_kbps: null, down_kbps: 7 } });
  });
});

describe("Run now from the sources page (issue 17)", () => {
  it("opens the backup's live job page; a queued run stays on the sources page and says so", async () => {
    const { source_group: group } = (await (
      await s.operator.json("POST", s.groupsUrl(), ETC_GROUP)
    ).json()) as {
      source_group: { id: string };
    };
    const csrf = csrfFrom(await (await s.operator.request(`/hosts/${s.hostId}/sources`)).text());
    const runUrl = `/hosts/${s.hostId}/source-groups/${group.id}/run`;

    const queued = await s.operator.form(runUrl, { _csrf: csrf }, { "HX-Request": "true" });
    expect(queued.status).toBe(204);
    const [pending] = await s.deps.db.select().from(pendingRuns);
    expect(queued.headers.get("HX-Redirect")).toBe(`/hosts/${s.hostId}/sources?queued=${pending?.id}`);
    const queuedPage = await (await s.operator.request(queued.headers.get("HX-Redirect") ?? "")).text();
    expect(queuedPage).toContain('data-testid="run-queued"');
    await s.deps.db.delete(pendingRuns);

    s.deps.hub.register(createRecordingConnection(s.hostId));
    const viaHtmx = await s.operator.form(runUrl, { _csrf: csrf }, { "HX-Request": "true" });
    expect(viaHtmx.status).toBe(204);
    const [first] = await s.deps.db.select().from(jobs);
    expect(viaHtmx.headers.get("HX-Redirect")).toBe(`/jobs/${first?.id}`);

    await s.deps.db.update(jobs).set({ status: "succeeded" });
    const plain = await s.operator.form(runUrl, { _csrf: csrf });
    expect(plain.status).toBe(303);
    const [second] = (await s.deps.db.select().from(jobs)).filter((job) => job.id !== first?.id);
    expect(plain.headers.get("Location")).toBe(`/jobs/${second?.id}`);
    expect((await s.operator.request(plain.headers.get("Location") ?? "")).status).toBe(200);
  });
});

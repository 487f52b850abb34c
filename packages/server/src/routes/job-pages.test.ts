import { auditLog, jobLogs } from "@fleetback/db";
import { formatIso as iso } from "@fleetback/web";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { readJob, seedHost, seedJob } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import { seedSystemJob } from "../testing/system-job.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps;
let operator: TestClient;
let viewer: TestClient;
let hostId: string;

beforeEach(async () => {
  const started = await startSignedInApp({
    users: [
      { username: "ops", role: "operator" },
      { username: "looker", role: "viewer" },
    ],
  });
  deps = started.deps;
  operator = started.users.ops;
  viewer = started.users.looker;
  hostId = (await seedHost(deps, { name: "db-<01>" })).host.id;
});
afterEach(async () => {
  await deps.close();
});

/** A backup the system started at 11:59 and is still running, with the progress last reported. */
function runningBackup(progress: Record<string, unknown>) {
  return seedSystemJob(deps, hostId, "backup", {
    status: "running",
    startedAt: new Date("2026-11-21T11:59:00Z"),
    progress: { job_id: "x", ...progress },
  });
}

describe("job page", () => {
  it("shows a keeper's forget plan: what goes, what stays and why, and what was suspect", async () => {
    const id = (n: number) => n.toString(16).padStart(64, "0");
    const job = await seedJob(
      deps,
      {
        hostId,
        kind: "forget",
        actorKind: "system",
        params: {
          forget_groups: [{ tag: "web", keep: { daily: 3 } }],
          snapshot_ids: [id(14)],
          retention_plan: {
            groups: [
              {
                tag: "web",
                keep: [{ id: id(11), reasons: ["daily snapshot"] }],
                keep_more: 0,
                remove: [id(14)],
                suspect: [
                  {
                    id: id(15),
                    claimed: "2026-11-19T12:00:00.000+01:00",
                    first_seen: "2026-11-21T11:00:00.000Z",
                  },
                ],
              },
            ],
            remove_total: 1,
          },
        },
      },
      { status: "queued" },
    );
    const html = await (await viewer.request(`/jobs/${job.id}`)).text();
    expect(html).toContain('data-testid="retention-plan"');
    expect(html).toMatch(/data-plan="remove"><td><code>00000000<\/code><\/td><td>forgotten/);
    expect(html).toContain("daily snapshot");
    // The claimed time is printed as every moment is (restic's own text is in the raw result).
    expect(html).toMatch(
      /data-plan="suspect">[\s\S]*kept, not counted[\s\S]*<time datetime="2026-11-19T11:00:00Z"/,
    );
    const api = (await (await viewer.request(`/api/jobs/${job.id}`)).json()) as {
      job: { params: Record<string, unknown> };
    };
    expect(api.job.params.retention_plan).toMatchObject({ remove_total: 1 });
  });

  it("renders stored progress, the log tail and a cancel button for operators only", async () => {
    const job = await runningBackup({
      percent_done: 0.425,
      files_done: 17,
      files_total: 40,
      bytes_done: 2 * 1024 * 1024,
      bytes_total: 4 * 1024 * 1024,
      eta_seconds: 75,
      current_file: "/srv/<data>.bin",
    });
    await deps.db.insert(jobLogs).values([
      { jobId: job.id, seq: 1, stream: "stdout", line: "open repository", ts: new Date() },
      { jobId: job.id, seq: 2, stream: "stderr", line: "warning: <b>odd</b>", ts: new Date() },
    ]);
    const html = await (await operator.request(`/jobs/${job.id}`)).text();
    expect(html).toContain(`data-stream="/jobs/${job.id}/stream"`);
    expect(html).toContain('data-last-seq="2"');
    expect(html).toMatch(/<progress id="job-progress"[^>]* value="42.5"/);
    expect(html).toContain("17 of 40");
    expect(html).toContain("2.00 MiB of 4.00 MiB");
    expect(html).toContain("1 min 15 s");
    expect(html).toContain("/srv/&lt;data&gt;.bin");
    expect(html).toContain("open repository");
    expect(html).toContain("warning: &lt;b&gt;odd&lt;/b&gt;");
    expect(html).toContain("db-&lt;01&gt;");
    expect(html).toContain(`/hosts/${hostId}`);
    expect(html).toContain('data-testid="job-cancel"');
    expect(html).toMatch(/<script src="\/static\/job-stream\.js\?v=[0-9a-f]+" defer><\/script>/);
    expect(html).not.toMatch(/style="/);
    const seen = await (await viewer.request(`/jobs/${job.id}`)).text();
    expect(seen).not.toContain('data-testid="job-cancel"');
  });

  it("shows a finished job's result and summary without a stream or cancel", async () => {
    const job = await seedSystemJob(deps, hostId, "backup", {
      status: "failed",
      exitCode: 3,
      error: "some files could not be read",
      startedAt: new Date("2026-11-21T11:00:00Z"),
      finishedAt: new Date("2026-11-21T11:10:00Z"),
      summary: { files_new: 12, snapshot_id: "abcdef12" },
    });
    const html = await (await operator.request(`/jobs/${job.id}`)).text();
    expect(html).not.toContain("data-stream=");
    expect(html).not.toContain('data-testid="job-cancel"');
    expect(html).toMatch(/data-testid="job-exit-code">3</);
    expect(html).toContain("some files could not be read");
    expect(html).toContain("files_new");
    expect(html).toContain("abcdef12");
    expect(html).toContain("10 min 0 s");
    expect((await viewer.request("/jobs/01JD0000000000000000000000")).status).toBe(404);
  });

  it("shows what the agent logged after the job's result apart from the job's log", async () => {
    const job = await seedJob(
      deps,
      { hostId, kind: "backup", actorKind: "user" },
      { status: "succeeded", finishedAt: new Date("2026-11-21T11:10:00Z"), logEndSeq: 2 },
    );
    const line = (seq: number, text: string) => ({
      jobId: job.id,
      seq,
      stream: "agent" as const,
      line: text,
      ts: new Date("2026-11-21T11:10:00Z"),
    });
    await deps.db
      .insert(jobLogs)
      .values([
        line(1, "backup started"),
        line(2, "snapshot abc saved"),
        line(3, "repository stats: 6 snapshots"),
      ]);
    const html = await (await viewer.request(`/jobs/${job.id}`)).text();
    const log = html.slice(
      html.indexOf('data-testid="job-log"'),
      html.indexOf('data-testid="job-log-after"'),
    );
    expect(log).toContain("snapshot abc saved");
    expect(log).not.toContain("repository stats");
    expect(html).toMatch(
      /After the job ended<\/h3>\s*<div class="log-tail" data-testid="job-log-after"[^>]*><div class="log-line agent" data-seq="3">repository stats: 6 snapshots</,
    );
    const api = (await (await viewer.request(`/api/jobs/${job.id}`)).json()) as {
      job: { log_end_seq: number };
    };
    expect(api.job.log_end_seq).toBe(2);
  });

  it("labels and formats the summary, with the raw JSON one click away", async () => {
    const job = await seedSystemJob(deps, hostId, "backup", {
      status: "succeeded",
      exitCode: 0,
      startedAt: new Date("2026-11-21T11:00:00Z"),
      finishedAt: new Date("2026-11-21T11:10:00Z"),
      summary: { data_added: 21649460, total_duration: 95.2, files_new: 1200, brand_new_key: 7 },
    });
    const html = await (await operator.request(`/jobs/${job.id}`)).text();
    expect(html).toContain('<tr data-key="data_added"><th scope="row">Data added</th><td>20.6 MiB</td></tr>');
    expect(html).toContain(
      '<tr data-key="total_duration"><th scope="row">Duration</th><td>1 min 35 s</td></tr>',
    );
    expect(html).toContain('<tr data-key="files_new"><th scope="row">New files</th><td>1,200</td></tr>');
    expect(html).toContain('<tr data-key="brand_new_key"><th scope="row">brand_new_key</th><td>7</td></tr>');
    expect(html).not.toContain("<td>21649460</td>");
    expect(html).toContain('<summary>Raw JSON</summary><pre id="job-summary-json">{\n');
    expect(html).toContain("&quot;data_added&quot;: 21649460");
  });

  it("says 'finishing' instead of 100 % and 'time left –' while restic writes its last data", async () => {
    const job = await runningBackup({
      percent_done: 1,
      files_done: 6,
      files_total: 6,
      bytes_done: 6291456,
      bytes_total: 6291456,
    });
    const html = await (await operator.request(`/jobs/${job.id}`)).text();
    expect(html).toContain(
      '<span id="job-percent" data-testid="job-percent">finishing…</span><span id="job-percent-unit" hidden> %</span>',
    );
    expect(html).toMatch(/<progress id="job-progress" data-testid="job-progress" max="100" aria-label/);
    expect(html).toContain("restic has read everything and is writing the last data to the repository");
  });

  it("renders restic's JSON lines as sentences with the raw line behind them, and warns of retries", async () => {
    const job = await seedSystemJob(deps, hostId, "restore", {
      status: "running",
      startedAt: new Date("2026-11-21T11:59:00Z"),
    });
    const retry = (after: string) =>
      `Stat(<config/>) returned error, retrying after ${after}: Head "http://127.0.0.1:1/config": dial tcp 127.0.0.1:1: connect: connection refused`;
    const json = '{"message_type":"verbose_status","action":"restored","item":"/etc/<hosts>","size":2048}';
    await deps.db.insert(jobLogs).values([
      { jobId: job.id, seq: 1, stream: "stdout", line: json, ts: new Date() },
      { jobId: job.id, seq: 2, stream: "stderr", line: retry("727ms"), ts: new Date() },
      { jobId: job.id, seq: 3, stream: "stderr", line: retry("2.3s"), ts: new Date() },
      {
        jobId: job.id,
        seq: 4,
        stream: "stderr",
        line: "\x1b[2Ksignal terminated received, cleaning up",
        ts: new Date(),
      },
    ]);
    const html = await (await operator.request(`/jobs/${job.id}`)).text();
    expect(html).toContain(
      '<details class="log-line stdout" data-seq="1"><summary>restored /etc/&lt;hosts&gt; (2.00 KiB)</summary><code class="log-raw">{&quot;message_type&quot;:&quot;verbose_status&quot;',
    );
    expect(html).toContain(
      '<div class="log-line stderr" data-seq="4">signal terminated received, cleaning up</div>',
    );
    expect(html).not.toContain("\x1b");
    expect(html).toContain('<div class="log-line stderr retry" data-seq="3">');
    expect(html).toMatch(
      /<p id="job-retries" class="notice-warn" role="status" data-testid="job-retries" data-count="2">/,
    );
    expect(html).toContain("restic is retrying</span> requests to the repository");
    expect(html).toContain('<span id="job-retries-count" data-testid="job-retries-count">2</span>');
    expect(html).toContain("Stat(&lt;config/&gt;) returned error, retrying after 2.3s");

    const quiet = await seedSystemJob(deps, hostId, "check", { status: "running" });
    const calm = await (await operator.request(`/jobs/${quiet.id}`)).text();
    expect(calm).toMatch(/data-testid="job-retries" data-count="0" hidden>/);
  });
});

describe("host jobs page", () => {
  it("lists the host's jobs with status and kind filters, each linking to its page", async () => {
    const failed = await seedSystemJob(deps, hostId, "backup", { status: "failed" });
    const init = await seedSystemJob(deps, hostId, "init", { status: "succeeded" });
    const all = await (await viewer.request(`/hosts/${hostId}/jobs`)).text();
    expect(all).toContain('data-testid="tab-jobs" aria-selected="true"');
    expect(all).toContain(`href="/jobs/${failed.id}"`);
    expect(all).toContain(`href="/jobs/${init.id}"`);
    const onlyFailed = await (await viewer.request(`/hosts/${hostId}/jobs?status=failed&kind=`)).text();
    expect(onlyFailed).toContain(`href="/jobs/${failed.id}"`);
    expect(onlyFailed).not.toContain(`href="/jobs/${init.id}"`);
    const onlyInit = await (await viewer.request(`/hosts/${hostId}/jobs?kind=init`)).text();
    expect(onlyInit).not.toContain(`href="/jobs/${failed.id}"`);
    expect((await viewer.request(`/hosts/${hostId}/jobs?status=bogus`)).status).toBe(400);
  });

  it("shows when each job started, before when it ended (issue 35)", async () => {
    const started = new Date("2026-11-21T11:00:00Z");
    const ended = new Date("2026-11-21T11:30:00Z");
    await seedSystemJob(deps, hostId, "backup", {
      status: "succeeded",
      startedAt: started,
      finishedAt: ended,
    });
    const page = await (await viewer.request(`/hosts/${hostId}/jobs`)).text();
    const headings = [...page.matchAll(/<th scope="col">([^<]+)<\/th>/g)].map((m) => m[1]);
    expect(headings.indexOf("Started")).toBeGreaterThan(-1);
    expect(headings.indexOf("Started")).toBeLessThan(headings.indexOf("Ended"));
    expect(page).toMatch(
      new RegExp(
        `data-testid="job-started"><time datetime="${iso(started)}"[\\s\\S]*data-testid="job-ended"><time datetime="${iso(ended)}"`,
      ),
    );
  });
});

describe("cancel on an offline host", () => {
  it("cancels a queued job directly and audits job.cancel", async () => {
    const job = await seedSystemJob(deps, hostId, "backup");
    const res = await operator.json("POST", `/api/jobs/${job.id}/cancel`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ job_id: job.id, status: "cancelled", cancel_sent: false });
    expect(await readJob(deps, job.id)).toMatchObject({ status: "cancelled" });
    const audit = await deps.db.select().from(auditLog);
    expect(audit.map((a) => [a.action, a.targetId])).toContainEqual(["job.cancel", job.id]);
  });

  it("answers 409 for a finished job, 503 for a running one it cannot reach", async () => {
    const done = await seedSystemJob(deps, hostId, "backup", { status: "succeeded" });
    expect((await operator.json("POST", `/api/jobs/${done.id}/cancel`)).status).toBe(409);
    const running = await seedSystemJob(deps, hostId, "backup", { status: "running" });
    expect((await operator.json("POST", `/api/jobs/${running.id}/cancel`)).status).toBe(503);
    expect(await readJob(deps, running.id)).toMatchObject({ status: "running" });
  });

  it("is posted from the job page form and redirects back to the job", async () => {
    const job = await seedSystemJob(deps, hostId, "backup");
    const csrf = csrfFrom(await (await operator.request(`/jobs/${job.id}`)).text());
    const res = await operator.form(`/jobs/${job.id}/cancel`, { _csrf: csrf });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/jobs/${job.id}`);
    expect(await readJob(deps, job.id)).toMatchObject({ status: "cancelled" });
    const again = await operator.form(`/jobs/${job.id}/cancel`, { _csrf: csrf });
    expect(again.status).toBe(409);
  });
});

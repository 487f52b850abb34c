import { auditLog, jobLogs } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { csrfFrom } from "../testing/http.js";
import { jobsOf, SNAP_NEW, SNAP_OLD, startRestoreWizard } from "../testing/restore-wizard.js";
import { seedJob } from "../testing/seed.js";

runDbSuite("diff", (getDb) => {
  it("starts a diff job from the snapshots tab and audits it; refuses bad pairs and offline hosts", async () => {
    const s = await startRestoreWizard(getDb());
    const page = await (await s.client.request(`/hosts/${s.hostId}/snapshots`)).text();
    const csrf = csrfFrom(page);
    const res = await s.client.form(
      `/hosts/${s.hostId}/diff`,
      { _csrf: csrf, snapshot_a: SNAP_OLD, snapshot_b: SNAP_NEW },
      { "HX-Request": "true" },
    );
    expect(res.status).toBe(204);
    const [job] = await jobsOf(s);
    expect(job).toMatchObject({ kind: "diff", actorKind: "user" });
    expect(res.headers.get("hx-redirect")).toBe(`/jobs/${job?.id}`);
    expect(s.agent.frames.map((frame) => frame.payload)).toEqual([
      {
        job_id: job?.id,
        kind: "diff",
        requires_admin_creds: false,
        diff: { snapshot_a: SNAP_OLD, snapshot_b: SNAP_NEW },
      },
    ]);
    const audit = await s.deps.db.select().from(auditLog).where(eq(auditLog.action, "host.diff"));
    expect(audit).toHaveLength(1);

    const url = `/api/hosts/${s.hostId}/diff`;
    for (const [body, field] of [
      [{ snapshot_a: SNAP_OLD, snapshot_b: SNAP_OLD }, "snapshot_b"],
      [{ snapshot_a: "", snapshot_b: SNAP_NEW }, "snapshot_a"],
      [{ snapshot_a: SNAP_OLD, snapshot_b: "feedface" }, "snapshot_b"],
      [{ snapshot_a: SNAP_OLD }, "snapshot_b"],
    ] as const) {
      const bad = await s.client.json("POST", url, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(((await bad.json()) as { message: string }).message).toMatch(new RegExp(`^${field}: `));
    }
    const created = await s.client.json("POST", url, {
      snapshot_a: SNAP_OLD.slice(0, 8),
      snapshot_b: SNAP_NEW,
    });
    expect(created.status).toBe(201);
    s.deps.hub.unregister(s.agent);
    const offline = await s.client.json("POST", url, { snapshot_a: SNAP_OLD, snapshot_b: SNAP_NEW });
    expect(offline.status).toBe(503);
    expect(await jobsOf(s)).toHaveLength(2);
  });

  for (const [label, lines] of [
    [
      "restic 0.18 diff --json",
      [
        '{"message_type":"change","path":"/srv/lab/src/tree/docs/new.txt","modifier":"+"}',
        '{"message_type":"change","path":"/srv/lab/src/tree/docs/notes.md","modifier":"-"}',
        '{"message_type":"change","path":"/srv/lab/src/tree/docs/readme.txt","modifier":"M"}',
        '{"message_type":"change","path":"/srv/lab/src/tree/docs/sub/deep.txt","modifier":"M"}',
        `{"message_type":"statistics","source_snapshot":"${SNAP_OLD}","target_snapshot":"${SNAP_NEW}","changed_files":2,"added":{"files":1,"dirs":0,"others":0,"data_blobs":3,"tree_blobs":7,"bytes":4447},"removed":{"files":1,"dirs":0,"others":0,"data_blobs":3,"tree_blobs":7,"bytes":4367}}`,
      ],
      "4.34 KiB",
    ],
    [
      "restic 0.14 text",
      [
        "comparing snapshot aea8dcbd to 58fb07f5:",
        "",
        "+    /srv/lab/src/tree/docs/new.txt",
        "-    /srv/lab/src/tree/docs/notes.md",
        "M    /srv/lab/src/tree/docs/readme.txt",
        "M    /srv/lab/src/tree/docs/sub/deep.txt",
        "",
        "Files:           1 new,     1 removed,     2 changed",
        "Dirs:            0 new,     0 removed",
        "Others:          0 new,     0 removed",
        "Data Blobs:      3 new,     3 removed",
        "Tree Blobs:      7 new,     7 removed",
        "  Added:   4.343 KiB",
        "  Removed: 4.265 KiB",
        "some line restic may print one day",
      ],
      "4.343 KiB",
    ],
  ] as const) {
    it(`renders a finished diff job's ${label} output as a table and a summary`, async () => {
      const s = await startRestoreWizard(getDb());
      const job = await seedJob(
        s.deps,
        {
          hostId: s.hostId,
          kind: "diff",
          actorKind: "user",
          params: { snapshot_a: SNAP_OLD, snapshot_b: SNAP_NEW },
        },
        { status: "succeeded", exitCode: 0 },
      );
      await s.deps.db.insert(jobLogs).values(
        lines.map((line, index) => ({
          jobId: job.id,
          seq: index + 1,
          stream: "stdout" as const,
          line,
          ts: new Date(),
        })),
      );
      const res = await s.client.request(`/jobs/${job.id}`);
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(html.match(/data-testid="diff-row" data-change="added"/g)).toHaveLength(1);
      expect(html.match(/data-testid="diff-row" data-change="removed"/g)).toHaveLength(1);
      expect(html.match(/data-testid="diff-row" data-change="modified"/g)).toHaveLength(2);
      expect(html).toContain("<code>/srv/lab/src/tree/docs/sub/deep.txt</code>");
      expect(html).toContain("1 added · 1 removed · 2 modified");
      expect(html).toContain(
        `<th scope="row">Added</th><td>${label.includes("text") ? "4.343 KiB" : "4.34 KiB"}</td>`,
      );
      expect(html).toContain('<th scope="row">Files</th><td>1 new, 1 removed, 2 changed</td>');
      if (label.includes("text")) {
        expect(html).toContain('data-testid="diff-raw"');
        expect(html).toContain("some line restic may print one day");
      }
    });
  }
});

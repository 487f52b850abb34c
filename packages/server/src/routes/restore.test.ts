/**
 * The restore wizard's submit and the diff endpoints, in-process, on both engines: every invalid
 * input of the restore form re-renders the wizard with the operator's input and sends nothing;
 * success sends one command.run with `<job-id>` substituted and writes the audit entry.
 */

import { mergeUrlCredentials, parsePublicKey, repositoryDigest, verifySignature } from "@fleetback/crypto";
import type { Database } from "@fleetback/db";
import { auditLog, hosts, jobLogs, jobs } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import {
  AGENT_DIRS_PROTOCOL_VERSION,
  type CommandRunRestore,
  PROTOCOL_VERSION,
  RESTORE_ORDER_TTL_MS,
  type RestoreOrderPayload,
  restoreOrderMessage,
} from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { restoreOrderPublicKey } from "../restore/restore-order.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { createRecordingConnection, type RecordingConnection } from "../testing/recording-connection.js";
import { bindCredentials, seedHost, seedJob } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

const SNAP_OLD = "c503a2e1411551581f05e3024dc276492c1af6f7dafd51834fef527d035c3680";
const SNAP_NEW = "b6926cf4b56e08d52e23b47ed13dc7c0f3ade7f8eabe18b3dd6ca809e77d963a";
const SESSION = "wizard-session-0123456789";

interface Setup {
  deps: TestDeps;
  client: TestClient;
  hostId: string;
  agent: RecordingConnection;
}

async function setup(db: Database, options: { online?: boolean } = {}): Promise<Setup> {
  const { deps, users } = await startSignedInApp({
    deps: { db },
    users: [{ username: "olga", role: "operator" }],
  });
  const client = users.olga;
  const { host } = await seedHost(deps, { name: "web-1" });
  await replaceSnapshots(deps.db, host.id, {
    refreshed_at: "2026-11-21T11:00:00Z",
    snapshots: [
      {
        id: SNAP_NEW,
        short_id: SNAP_NEW.slice(0, 8),
        time: "2026-11-21T10:00:00Z",
        hostname: "web-1",
        paths: ["/srv/lab/src/tree"],
        tags: ["daily"],
        size_bytes: 4096,
        file_count: 7,
      },
      {
        id: SNAP_OLD,
        short_id: SNAP_OLD.slice(0, 8),
        time: "2026-11-20T10:00:00Z",
        hostname: "web-1",
        paths: ["/srv/lab/src/tree"],
        tags: ["weekly"],
        size_bytes: 4000,
        file_count: 6,
      },
    ],
  });
  const agent = createRecordingConnection(host.id);
  if (options.online !== false) {
    deps.hub.register(agent);
  }
  return { deps, client, hostId: host.id, agent };
}

/** Posts the wizard form as a browser does: repeated `paths` fields, the page's CSRF token. */
async function submit(s: Setup, fields: Array<[string, string]>, headers: Record<string, string> = {}) {
  const page = await s.client.request(`/hosts/${s.hostId}/snapshots/${SNAP_NEW}/restore?session=${SESSION}`);
  expect(page.status).toBe(200);
  const body = new URLSearchParams([["_csrf", csrfFrom(await page.text())], ["session", SESSION], ...fields]);
  return s.client.request(`/hosts/${s.hostId}/restore`, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Origin: new URL(s.deps.config.baseUrl).origin,
      ...headers,
    },
    body: body.toString(),
  });
}

async function jobsOf(s: Setup) {
  return s.deps.db.select().from(jobs).where(eq(jobs.hostId, s.hostId));
}

runDbSuite("restore wizard", (getDb) => {
  it("opens from a snapshot with the snapshot chosen, the tree requested and the default target", async () => {
    const s = await setup(getDb());
    const res = await s.client.request(`/hosts/${s.hostId}/snapshots/${SNAP_NEW}/restore`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(`data-snapshot-id="${SNAP_NEW}"`);
    expect(html).toMatch(
      /hx-get="\/hosts\/[0-9A-Z]+\/restore\/tree\?session=[A-Za-z0-9_-]{16,}&amp;snapshot_id=b6926cf4/,
    );
    expect(html).toContain('value="$HOME/fleetback-restore/&lt;job-id&gt;/"');
    expect(html).toContain('data-testid="tab-restore"');

    const search = await s.client.request(`/hosts/${s.hostId}/restore?session=${SESSION}&q=weekly`);
    const found = await search.text();
    expect(found).toContain(`data-snapshot-id="${SNAP_OLD}"`);
    expect(found).not.toContain(`data-snapshot-id="${SNAP_NEW}"`);
    for (const q of ["2026-11-21", "b6926c"]) {
      const byOther = await (
        await s.client.request(`/hosts/${s.hostId}/restore?session=${SESSION}&q=${q}`)
      ).text();
      expect(byOther, q).toContain(`data-snapshot-id="${SNAP_NEW}"`);
      expect(byOther, q).not.toContain(`data-snapshot-id="${SNAP_OLD}"`);
    }
    const snapshotsTab = await (await s.client.request(`/hosts/${s.hostId}/snapshots`)).text();
    expect(snapshotsTab).toContain(`href="/hosts/${s.hostId}/snapshots/${SNAP_NEW}/restore"`);
    expect(snapshotsTab).toContain('data-testid="diff-form"');
  });

  it("re-renders every Errors row with the operator's input kept and sends nothing", async () => {
    const s = await setup(getDb());
    const cases: Array<{ fields: Array<[string, string]>; field: string; kept: string[] }> = [
      {
        fields: [
          ["snapshot_id", ""],
          ["paths", "/srv/lab/src/tree/docs"],
          ["in_place", "false"],
          ["target_dir", "/srv/restore-here"],
        ],
        field: "snapshot_id",
        kept: ['value="/srv/lab/src/tree/docs"', 'value="/srv/restore-here"'],
      },
      {
        fields: [
          ["snapshot_id", "deadbeef"],
          ["paths", "/srv/lab/src/tree/docs"],
          ["in_place", "false"],
          ["target_dir", "/srv/x"],
        ],
        field: "snapshot_id",
        kept: ['value="deadbeef"', 'value="/srv/lab/src/tree/docs"'],
      },
      {
        fields: [
          ["snapshot_id", SNAP_NEW],
          ["paths", ""],
          ["in_place", "false"],
          ["target_dir", "/srv/restore-here"],
        ],
        field: "paths",
        kept: ['value="/srv/restore-here"'],
      },
      {
        fields: [
          ["snapshot_id", SNAP_NEW],
          ["paths", "/srv/lab/src/tree/docs"],
          ["paths", "etc/hosts"],
          ["in_place", "false"],
          ["target_dir", "/srv/x"],
        ],
        field: "paths",
        kept: ['value="etc/hosts"', 'value="/srv/lab/src/tree/docs"'],
      },
      {
        fields: [
          ["snapshot_id", SNAP_NEW],
          ["paths", "/srv/lab/src/tree/docs"],
          ["in_place", "true"],
          ["confirm_hostname", "web-2"],
        ],
        field: "confirm_hostname",
        kept: ['value="web-2"', 'value="true" checked'],
      },
      {
        fields: [
          ["snapshot_id", SNAP_NEW],
          ["paths", "/srv/lab/src/tree/docs"],
          ["in_place", "false"],
          ["target_dir", "restore/here"],
        ],
        field: "target_dir",
        kept: ['value="restore/here"'],
      },
      {
        fields: [
          ["snapshot_id", SNAP_NEW],
          ["paths", "/srv/lab/src/tree/docs"],
          ["in_place", "false"],
          ["target_dir", "$TMPDIR/restore"],
        ],
        field: "target_dir",
        kept: ['value="$TMPDIR/restore"'],
      },
      {
        fields: [
          ["snapshot_id", SNAP_NEW],
          ["paths", "/srv/lab/src/tree/docs"],
          ["in_place", "false"],
          ["target_dir", "$HOME/$USER/restore"],
        ],
        field: "target_dir",
        kept: ['value="$HOME/$USER/restore"'],
      },
      {
        fields: [
          ["snapshot_id", SNAP_NEW],
          ["paths", "/srv/lab/src/tree/docs"],
          ["in_place", "false"],
          ["target_dir", "~user/restore"],
        ],
        field: "target_dir",
        kept: ['value="~user/restore"'],
      },
    ];
    for (const { fields, field, kept } of cases) {
      for (const action of ["review", "restore"]) {
        const res = await submit(s, [...fields, ["action", action]]);
        const label = `${JSON.stringify(fields)} ${action}`;
        expect(res.status, label).toBe(400);
        const html = await res.text();
        expect(html, label).toContain(`data-testid="restore-error" data-field="${field}"`);
        expect(html, label).toContain('data-testid="restore-form"');
        for (const fragment of kept) {
          expect(html, label).toContain(fragment);
        }
      }
    }
    expect(s.agent.frames).toEqual([]);
    expect(await jobsOf(s)).toEqual([]);
  });

  it("refuses targets in or over the agent's own directories and / (page and API), input kept", async () => {
    const s = await setup(getDb());
    const refused = [
      "/etc/fleetback-agent",
      "/var/lib/fleetback-agent/",
      "/var/lib/fleetback-agent/update",
      "/opt/fleetback-agent",
      "/opt//fleetback-agent/x/..",
      "/tmp/../etc/fleetback-agent",
      "/var/lib",
      "/",
    ];
    for (const target of refused) {
      const res = await submit(s, [
        ["snapshot_id", SNAP_NEW],
        ["paths", "/srv/lab/src/tree/docs"],
        ["in_place", "false"],
        ["target_dir", target],
        ["action", "restore"],
      ]);
      expect(res.status, target).toBe(400);
      const html = await res.text();
      expect(html, target).toContain('data-testid="restore-error" data-field="target_dir"');
      expect(html, target).toContain(`value="${target}"`);
      const api = await s.client.json("POST", `/api/hosts/${s.hostId}/restore`, {
        snapshot_id: SNAP_NEW,
        paths: ["/srv/lab/src/tree/docs"],
        in_place: false,
        target_dir: target,
      });
      expect(api.status, target).toBe(400);
      expect(((await api.json()) as { message: string }).message, target).toMatch(/^target_dir: /);
    }
    // A path that reaches the state dir from a harmless-looking target, and an in-place path over it.
    const deep = await s.client.json("POST", `/api/hosts/${s.hostId}/restore`, {
      snapshot_id: SNAP_NEW,
      paths: ["/fleetback-agent/agent.json"],
      in_place: false,
      target_dir: "/etc",
    });
    expect(deep.status).toBe(400);
    const inPlace = await s.client.json("POST", `/api/hosts/${s.hostId}/restore`, {
      snapshot_id: SNAP_NEW,
      paths: ["/var/lib/fleetback-agent/update/boot.json"],
      in_place: true,
      confirm_hostname: "web-1",
    });
    expect(inPlace.status).toBe(400);
    expect(((await inPlace.json()) as { message: string }).message).toMatch(/^paths: /);
    expect(s.agent.frames).toEqual([]);
    expect(await jobsOf(s)).toEqual([]);
  });

  it("refuses paths in the agent's own directories, also those its hello named, wherever they go (issue 33)", async () => {
    const s = await setup(getDb());
    await s.deps.db
      .update(hosts)
      .set({ agentDirs: ["/srv/lab/src/tree/.state/"], protocolVersion: PROTOCOL_VERSION })
      .where(eq(hosts.id, s.hostId));
    const restore = (paths: string[], target_dir = "$HOME/fleetback-restore/<job-id>/") =>
      s.client.json("POST", `/api/hosts/${s.hostId}/restore`, {
        snapshot_id: SNAP_NEW,
        paths,
        in_place: false,
        target_dir,
      });
    for (const [path, dir] of [
      ["/etc/fleetback-agent/agent.json", "/etc/fleetback-agent"],
      ["/etc/fleetback-agent", "/etc/fleetback-agent"],
      ["/var/lib/fleetback-agent/", "/var/lib/fleetback-agent"],
      ["/opt/fleetback-agent/../fleetback-agent/current.mjs", "/opt/fleetback-agent"],
      ["/srv/lab/src/tree/.state/update/boot.json", "/srv/lab/src/tree/.state"],
    ] as const) {
      for (const target of ["$HOME/fleetback-restore/<job-id>/", "/srv/restored"]) {
        const res = await restore(["/srv/lab/src/tree/docs", path], target);
        expect(res.status, path).toBe(400);
        expect(((await res.json()) as { message: string }).message, path).toBe(
          `paths: ${path} is the agent's own directory ${dir} or lies inside it, which holds the host's agent token and is never backed up, restored, listed or downloaded`,
        );
      }
    }
    const page = await submit(s, [
      ["snapshot_id", SNAP_NEW],
      ["paths", "/etc/fleetback-agent/agent.json"],
      ["in_place", "false"],
      ["target_dir", "$HOME/fleetback-restore/<job-id>/"],
      ["action", "review"],
    ]);
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('data-testid="restore-error" data-field="paths"');
    expect(s.agent.frames).toEqual([]);
    expect(await jobsOf(s)).toEqual([]);

    // A folder above one: a protocol-12 agent restores around it; an older one would hand it over,
    // when the snapshot holds it (this one backed up /srv/lab/src/tree only).
    expect((await restore(["/srv/lab"])).status).toBe(201);
    await s.deps.db
      .update(hosts)
      .set({ protocolVersion: AGENT_DIRS_PROTOCOL_VERSION - 1 })
      .where(eq(hosts.id, s.hostId));
    const older = await restore(["/srv/lab"]);
    expect(older.status).toBe(400);
    expect(((await older.json()) as { message: string }).message).toBe(
      `paths: /srv/lab holds the agent's own directory /srv/lab/src/tree/.state, which this host's agent (protocol ${AGENT_DIRS_PROTOCOL_VERSION - 1}) does not leave out; update the agent to protocol ${AGENT_DIRS_PROTOCOL_VERSION}, or pick the paths around it`,
    );
    expect((await restore(["/"])).status).toBe(400);
    expect((await restore(["/etc"])).status).toBe(201);
  });

  it("shows a review without sending, then restores to the default target with <job-id> substituted", async () => {
    const s = await setup(getDb());
    const fields: Array<[string, string]> = [
      ["snapshot_id", SNAP_NEW],
      ["paths", "/srv/lab/src/tree/docs"],
      ["paths", "/srv/lab/src/tree/file with spaces ü.txt"],
      ["paths", ""],
      ["in_place", "false"],
      ["target_dir", "$HOME/fleetback-restore/<job-id>/"],
    ];
    const review = await submit(s, [...fields, ["action", "review"]]);
    expect(review.status).toBe(200);
    const html = await review.text();
    expect(html).toContain('data-testid="restore-review"');
    expect(html).toContain("file with spaces ü.txt");
    expect(s.agent.frames).toEqual([]);

    const res = await submit(s, [...fields, ["action", "restore"]]);
    expect(res.status).toBe(303);
    const [job] = await jobsOf(s);
    expect(job).toMatchObject({ kind: "restore", actorKind: "user", status: "queued" });
    expect(res.headers.get("location")).toBe(`/jobs/${job?.id}`);
    const target = `$HOME/fleetback-restore/${job?.id}/`;
    expect(s.agent.frames.map((frame) => [frame.type, frame.payload])).toEqual([
      [
        "command.run",
        {
          job_id: job?.id,
          kind: "restore",
          requires_admin_creds: false,
          restore: {
            snapshot_id: SNAP_NEW,
            paths: ["/srv/lab/src/tree/docs", "/srv/lab/src/tree/file with spaces ü.txt"],
            in_place: false,
            target_dir: target,
          },
        },
      ],
    ]);
    expect(job?.params).toMatchObject({ target_dir: target });
    const jobPage = await (await s.client.request(`/jobs/${job?.id}`)).text();
    expect(jobPage).toContain(`data-testid="job-restore-target"><code>${target}</code>`);
    const audit = await s.deps.db.select().from(auditLog).where(eq(auditLog.action, "host.restore"));
    expect(audit).toEqual([
      expect.objectContaining({
        actorKind: "user",
        targetKind: "host",
        targetId: s.hostId,
        details: expect.objectContaining({
          job_id: job?.id,
          snapshot_id: SNAP_NEW,
          in_place: false,
          target_dir: target,
        }),
      }),
    ]);
  });

  it("restores in place when the host name is typed, to / and without a target of the operator's", async () => {
    const s = await setup(getDb());
    const res = await submit(
      s,
      [
        ["snapshot_id", SNAP_OLD.slice(0, 8)],
        ["paths", "/srv/lab/src/tree/docs/readme.txt"],
        ["in_place", "true"],
        ["target_dir", "$HOME/fleetback-restore/<job-id>/"],
        ["confirm_hostname", "web-1"],
        ["action", "restore"],
      ],
      { "HX-Request": "true" },
    );
    expect(res.status).toBe(204);
    const [job] = await jobsOf(s);
    expect(res.headers.get("hx-redirect")).toBe(`/jobs/${job?.id}`);
    expect(s.agent.frames[0]?.payload).toMatchObject({
      kind: "restore",
      restore: {
        snapshot_id: SNAP_OLD,
        paths: ["/srv/lab/src/tree/docs/readme.txt"],
        in_place: true,
        target_dir: "/",
      },
    });
  });

  it("signs each restore as an order the host's restore helper checks: key, repository, snapshot, target, paths (issue 34)", async () => {
    const s = await setup(getDb());
    const url = "rest:https://backup.example.net/web-1/";
    await bindCredentials(s.deps, s.hostId, { repo: { url, username: "web-1", password: "repo-pass" } });
    const res = await submit(s, [
      ["snapshot_id", SNAP_NEW.slice(0, 8)],
      ["paths", "/srv/lab/src/tree/docs"],
      ["in_place", "false"],
      ["target_dir", "$HOME/fleetback-restore/<job-id>/"],
      ["action", "restore"],
    ]);
    expect(res.status).toBe(303);
    const [job] = await jobsOf(s);
    const sent = s.agent.frames.at(-1)?.payload as CommandRunRestore;
    const order = sent.restore.order;
    expect(order).toBeDefined();
    const key = parsePublicKey(restoreOrderPublicKey(s.deps.keys));
    expect(key.ok).toBe(true);
    const signature = Buffer.from(order?.signature ?? "", "base64");
    expect(key.ok && verifySignature(key.key, restoreOrderMessage(order?.payload ?? ""), signature)).toBe(
      true,
    );
    const payload = JSON.parse(order?.payload ?? "{}") as RestoreOrderPayload;
    expect(payload).toEqual({
      v: 1,
      host_id: s.hostId,
      job_id: job?.id,
      repository_sha256: repositoryDigest(mergeUrlCredentials(url, "web-1", "repo-pass")),
      snapshot_id: SNAP_NEW,
      in_place: false,
      target_dir: `$HOME/fleetback-restore/${job?.id}/`,
      paths: ["/srv/lab/src/tree/docs"],
      expires_at: new Date(s.deps.clock.now().getTime() + RESTORE_ORDER_TTL_MS).toISOString(),
    });
    // The order names the repository, never its credentials; the job row keeps no order.
    expect(order?.payload).not.toContain("repo-pass");
    expect(JSON.stringify(job?.params)).not.toContain("signature");
  });

  it("answers 503 for an offline host, keeps the input and leaves no job", async () => {
    const s = await setup(getDb(), { online: false });
    const res = await submit(s, [
      ["snapshot_id", SNAP_NEW],
      ["paths", "/srv/lab/src/tree/docs"],
      ["in_place", "false"],
      ["target_dir", "/srv/restore-here"],
      ["action", "restore"],
    ]);
    expect(res.status).toBe(503);
    const html = await res.text();
    expect(html).toContain('data-testid="restore-notice"');
    expect(html).toContain('value="/srv/restore-here"');
    const api = await s.client.json("POST", `/api/hosts/${s.hostId}/restore`, {
      snapshot_id: SNAP_NEW,
      paths: ["/srv/lab/src/tree/docs"],
      in_place: false,
    });
    expect(api.status).toBe(503);
    expect(await jobsOf(s)).toEqual([]);
  });

  it("JSON: 400 naming the field for each Errors row; 201 with the job id on success", async () => {
    const s = await setup(getDb());
    const url = `/api/hosts/${s.hostId}/restore`;
    const ok = { snapshot_id: SNAP_NEW, paths: ["/srv/lab/src/tree/docs"], in_place: false };
    for (const [body, field] of [
      [{ ...ok, snapshot_id: "" }, "snapshot_id"],
      [{ ...ok, snapshot_id: "0123abcd" }, "snapshot_id"],
      [{ ...ok, paths: [] }, "paths"],
      [{ ...ok, paths: ["srv/lab"] }, "paths"],
      [{ ...ok, in_place: true, confirm_hostname: "WEB-1" }, "confirm_hostname"],
      [{ ...ok, in_place: true }, "confirm_hostname"],
      [{ ...ok, target_dir: "relative/dir" }, "target_dir"],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable the agent must not expand
      [{ ...ok, target_dir: "${XDG_DATA_HOME}/r" }, "target_dir"],
      [{ snapshot_id: SNAP_NEW, paths: ["/srv"] }, "in_place"],
    ] as const) {
      const res = await s.client.json("POST", url, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { message: string }).message, JSON.stringify(body)).toMatch(
        new RegExp(`^${field}: `),
      );
    }
    expect(s.agent.frames).toEqual([]);

    // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell form the agent expands
    for (const target of ["${HOME}/r/<job-id>", "~/restores/", "/var/tmp/r"]) {
      const res = await s.client.json("POST", url, { ...ok, target_dir: target });
      expect(res.status, target).toBe(201);
      const { job_id: jobId, target_dir: sent } = (await res.json()) as {
        job_id: string;
        target_dir: string;
      };
      expect(sent).toBe(target.replace("<job-id>", jobId));
      expect(s.agent.frames.at(-1)?.payload).toMatchObject({ job_id: jobId, restore: { target_dir: sent } });
    }
  });
});

runDbSuite("diff", (getDb) => {
  it("starts a diff job from the snapshots tab and audits it; refuses bad pairs and offline hosts", async () => {
    const s = await setup(getDb());
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
      const s = await setup(getDb());
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

/**
 * The restore wizard's submit, in-process, on both engines: it opens from a snapshot, shows a
 * review, then sends one command.run with `<job-id>` substituted, signed as an order the host's
 * restore helper checks, and writes the audit entry; in place when the host name is typed; 503
 * with the input kept for an offline host; the JSON API likewise. Refused input is in
 * restore-invalid-input.test.ts, the diff endpoints in restore-diff.test.ts.
 */
import { mergeUrlCredentials, parsePublicKey, repositoryDigest, verifySignature } from "@fleetback/crypto";
import { auditLog } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import {
  type CommandRunRestore,
  RESTORE_ORDER_TTL_MS,
  type RestoreOrderPayload,
  restoreOrderMessage,
} from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { restoreOrderPublicKey } from "../restore/restore-order.js";
import { messageOf } from "../testing/http.js";
import {
  jobsOf,
  SESSION,
  SNAP_NEW,
  SNAP_OLD,
  startRestoreWizard,
  submitWizard,
} from "../testing/restore-wizard.js";
import { bindCredentials } from "../testing/seed.js";

runDbSuite("restore wizard", (getDb) => {
  it("opens from a snapshot with the snapshot chosen, the tree requested and the default target", async () => {
    const s = await startRestoreWizard(getDb());
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

  it("shows a review without sending, then restores to the default target with <job-id> substituted", async () => {
    const s = await startRestoreWizard(getDb());
    const fields: Array<[string, string]> = [
      ["snapshot_id", SNAP_NEW],
      ["paths", "/srv/lab/src/tree/docs"],
      ["paths", "/srv/lab/src/tree/file with spaces ü.txt"],
      ["paths", ""],
      ["in_place", "false"],
      ["target_dir", "$HOME/fleetback-restore/<job-id>/"],
    ];
    const review = await submitWizard(s, [...fields, ["action", "review"]]);
    expect(review.status).toBe(200);
    const html = await review.text();
    expect(html).toContain('data-testid="restore-review"');
    expect(html).toContain("file with spaces ü.txt");
    expect(s.agent.frames).toEqual([]);

    const res = await submitWizard(s, [...fields, ["action", "restore"]]);
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
    const s = await startRestoreWizard(getDb());
    const res = await submitWizard(
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
    const s = await startRestoreWizard(getDb());
    const url = "rest:https://backup.example.net/web-1/";
    await bindCredentials(s.deps, s.hostId, { repo: { url, username: "web-1", password: "repo-pass" } });
    const res = await submitWizard(s, [
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
    const s = await startRestoreWizard(getDb(), { online: false });
    const res = await submitWizard(s, [
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
    const s = await startRestoreWizard(getDb());
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
      expect(await messageOf(res), JSON.stringify(body)).toMatch(new RegExp(`^${field}: `));
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

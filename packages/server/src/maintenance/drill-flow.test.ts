/**
 * Restore drills through the real server and agent channel, on PGlite and PostgreSQL: an
 * operator's drill reaches a protocol-6 agent as `command.run` kind drill; its failure opens a
 * `restore_drill_failed` alert that the next passing drill resolves; the host page, the
 * maintenance page and the host API show the last drill; a protocol-5 agent is never sent one.
 */
import { alerts, maintenance, snapshots } from "@fleetback/db";
import type { ServerEnvelope } from "@fleetback/protocol";
import { and, eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { bindCredentials, seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { signInOn } from "../testing/signed-in-app.js";
import { connectAgent, jobEndHandled, type TestAgent } from "../testing/test-agent.js";

const REPO = { url: "rest:https://backup.example.org/web-1/", username: "web-1", password: "repo-pass" };
const SNAPSHOT = "3333333333333333333333333333333333333333333333333333333333333333";

runServerSuite("restore drills through the server", (server) => {
  // The bootstrap token works once per database: the client it signs in is kept for the suite.
  let signedIn: Promise<TestClient> | undefined;
  function adminClient(): Promise<TestClient> {
    signedIn ??= signInOn(server.deps).then((signed) => signed.admin);
    return signedIn;
  }

  async function hostWithAgent(name: string, protocolVersion?: number) {
    const { host, token } = await seedHost(server.deps, { name });
    await bindCredentials(server.deps, host.id, { repo: REPO });
    await server.deps.db.insert(snapshots).values({
      hostId: host.id,
      id: SNAPSHOT,
      shortId: SNAPSHOT.slice(0, 8),
      time: new Date("2026-11-21T01:00:00Z"),
      hostname: name,
    });
    const agent = await connectAgent(server.wsUrl, token);
    agent.hello({
      hostname: name,
      ...(protocolVersion === undefined ? {} : { protocol_version: protocolVersion }),
    });
    await agent.waitFor((frame) => frame.type === "schedule.set");
    await server.channel.idle();
    return { host, agent };
  }

  async function drill(admin: TestClient, agent: TestAgent, hostId: string, from: number) {
    const res = await admin.json("POST", `/api/hosts/${hostId}/jobs`, { kind: "drill" });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    const frame = await agent.waitFor(
      (f: ServerEnvelope) => f.type === "command.run" && f.payload.kind === "drill",
      5_000,
      from,
    );
    if (frame.type !== "command.run" || frame.payload.kind !== "drill") {
      throw new Error("no drill command");
    }
    return frame.payload;
  }

  async function finish(agent: TestAgent, jobId: string, failed: boolean) {
    agent.send("job.finished", {
      job_id: jobId,
      status: failed ? "failed" : "succeeded",
      exit_code: failed ? 1 : 0,
      ...(failed
        ? { error: "restic could not restore and verify the sample: Fatal: There were 1 errors" }
        : {}),
      summary: {
        snapshot_id: SNAPSHOT,
        files_in_snapshot: 12,
        files_checked: 5,
        bytes_checked: failed ? 100 : 2048,
        mismatch_count: failed ? 1 : 0,
        mismatches: failed ? [{ path: "/srv/a.bin", expected_size: 10, restored_size: null }] : [],
      },
    });
    await jobEndHandled(server, jobId, `drill ${jobId} to end`);
  }

  const drillAlerts = (hostId: string) =>
    server.deps.db
      .select()
      .from(alerts)
      .where(and(eq(alerts.hostId, hostId), eq(alerts.kind, "restore_drill_failed")));

  it("a failed drill opens restore_drill_failed, the pages show it, and the next passing drill resolves it", async () => {
    const admin = await adminClient();
    const { host, agent } = await hostWithAgent("web-1");
    try {
      const first = await drill(admin, agent, host.id, 0);
      expect(first.drill).toEqual({ snapshot_id: SNAPSHOT, sample_files: 20 });
      await finish(agent, first.job_id, true);
      const [opened] = await drillAlerts(host.id);
      expect(opened).toMatchObject({
        dedupKey: "",
        resolvedAt: null,
        message:
          "restore drill failed: restic could not restore and verify the sample: Fatal: There were 1 errors",
      });

      const page = await (await admin.request(`/hosts/${host.id}`)).text();
      expect(page).toMatch(/data-testid="last-drill-outcome">\s*<span class="status-failed">failed<\/span>/);
      expect(page).toContain('data-testid="last-drill-files">5 of 12 in the snapshot<');
      expect(page).toContain("restic could not restore and verify the sample: Fatal: There were 1 errors");
      expect(page).toContain("<code>/srv/a.bin</code> (not restored, recorded 10 bytes)");
      const api = (await (await admin.request(`/api/hosts/${host.id}`)).json()) as { host: unknown };
      expect(api.host).toMatchObject({
        last_drill: {
          job_id: first.job_id,
          status: "failed",
          snapshot_id: SNAPSHOT,
          files_checked: 5,
          mismatch_count: 1,
        },
      });

      const jobPage = await (await admin.request(`/jobs/${first.job_id}`)).text();
      expect(jobPage).toContain(
        `data-testid="job-drill-snapshot"><code class="id-short" title="${SNAPSHOT}"`,
      );
      expect(jobPage).toContain('data-testid="job-drill-sample">up to 20 random files');

      const second = await drill(admin, agent, host.id, agent.frames.length);
      await finish(agent, second.job_id, false);
      const [resolved] = await drillAlerts(host.id);
      expect(resolved?.id).toBe(opened?.id);
      expect(resolved?.resolvedAt).not.toBeNull();
      const maintenancePage = await (await admin.request(`/hosts/${host.id}/maintenance`)).text();
      expect(maintenancePage).toMatch(
        /data-testid="last-drill-outcome">\s*<span class="status-succeeded">passed<\/span>/,
      );
      expect(maintenancePage).toContain('data-testid="drill-cadence"');
      const maintenanceApi = (await (
        await admin.request(`/api/hosts/${host.id}/maintenance`)
      ).json()) as unknown;
      expect(maintenanceApi).toMatchObject({
        maintenance: { drill_enabled: false, drill_sample_files: 20 },
        last_drill: { job_id: second.job_id, status: "succeeded", bytes_checked: 2048 },
      });
    } finally {
      await agent.close();
    }
  });

  it("the maintenance form edits the drill cadence; a bad sample size is refused naming the field", async () => {
    const admin = await adminClient();
    const { host, agent } = await hostWithAgent("form-1");
    try {
      const page = await (await admin.request(`/hosts/${host.id}/maintenance`)).text();
      const csrf = csrfFrom(page);
      const fields = {
        _csrf: csrf,
        forget_cron: "0 3 * * *",
        forget_enabled: "on",
        prune_cron: "0 4 * * 0",
        check_cron: "0 5 1 * *",
        check_read_data_subset: "5%",
        drill_cron: "30 2 * * 1",
        drill_enabled: "on",
        drill_sample_files: "12",
      };
      const saved = await admin.form(`/hosts/${host.id}/maintenance`, fields, { "HX-Request": "true" });
      expect(saved.status).toBeLessThan(400);
      const [row] = await server.deps.db.select().from(maintenance).where(eq(maintenance.hostId, host.id));
      expect(row).toMatchObject({ drillCron: "30 2 * * 1", drillEnabled: true, drillSampleFiles: 12 });
      for (const sample of ["0", "101", "twelve"]) {
        const bad = await admin.form(
          `/hosts/${host.id}/maintenance`,
          { ...fields, drill_sample_files: sample },
          { "HX-Request": "true" },
        );
        expect(bad.status, sample).toBe(400);
        expect(await bad.text()).toMatch(/^drill_sample_files: /);
      }
    } finally {
      await agent.close();
    }
  });

  it("never sends a drill to a protocol-5 agent: the API refuses it with the reason and the page says so", async () => {
    const admin = await adminClient();
    const { host, agent } = await hostWithAgent("old-1", 5);
    try {
      const res = await admin.json("POST", `/api/hosts/${host.id}/jobs`, { kind: "drill" });
      expect(res.status).toBe(409);
      expect(((await res.json()) as { message: string }).message).toBe(
        "kind: restore drills need an agent of protocol 6 or later; this host's agent speaks 5: update the agent",
      );
      // (The hello's automatic init of a new repository is the only command it got.)
      expect(agent.frames.some((f) => f.type === "command.run" && f.payload.kind === "drill")).toBe(false);
      const page = await (await admin.request(`/hosts/${host.id}/maintenance`)).text();
      expect(page).toContain(
        'data-testid="drill-refusal">skipped: restore drills need an agent of protocol 6',
      );
    } finally {
      await agent.close();
    }
  });
});

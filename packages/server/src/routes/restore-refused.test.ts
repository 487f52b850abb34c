/**
 * A restore mistake is the operator's, not the host failing: a restore the host refused
 * before restic ran opens no alert, leaves the host off the failing list and reads "refused" on its
 * job page. Over a real server and a real agent socket, on both engines.
 */
import { alerts, hosts } from "@fleetback/db";
import { PROTOCOL_VERSION } from "@fleetback/protocol";
import { and, eq, isNull } from "drizzle-orm";
import { beforeAll, expect, it } from "vitest";
import type { JobEventMap } from "../jobs/job-events.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { eventually } from "../testing/eventually.js";
import type { TestClient } from "../testing/http.js";
import { seedHost, seedJob } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { signInOn } from "../testing/signed-in-app.js";
import { connectAgent } from "../testing/test-agent.js";

const SNAP = "b6926cf4b56e08d52e23b47ed13dc7c0f3ade7f8eabe18b3dd6ca809e77d963a";
const HELPER_REFUSAL =
  "restore helper: restores in place only with restic 0.16 or later (this host has 0.14.0); nothing was restored";

runServerSuite("restore refused by the host", (server) => {
  let client: TestClient;
  beforeAll(async () => {
    ({ admin: client } = await signInOn(server.deps));
  });

  async function hostWithRestic(name: string, toolVersion: string) {
    const { host, token } = await seedHost(server.deps, {
      name,
      toolVersion,
      protocolVersion: PROTOCOL_VERSION,
    });
    await replaceSnapshots(server.deps.db, host.id, {
      refreshed_at: "2026-11-21T11:00:00Z",
      snapshots: [
        {
          id: SNAP,
          short_id: SNAP.slice(0, 8),
          time: "2026-11-21T10:00:00Z",
          hostname: name,
          paths: ["/srv"],
          tags: ["daily"],
          size_bytes: 4096,
          file_count: 7,
        },
      ],
    });
    return { host, token };
  }

  it("counts a restore the host refused before restic ran as refused: no alert, not failing, said on the job page", async () => {
    const { host, token } = await hostWithRestic("old-2", "0.14.0");
    const job = await seedJob(
      server.deps,
      { hostId: host.id, kind: "restore", actorKind: "user", params: { in_place: true } },
      { status: "running", startedAt: server.deps.clock.now() },
    );
    const agent = await connectAgent(server.wsUrl, token);
    agent.hello({ hostname: "old-2", running_job_ids: [job.id] });
    await agent.waitFor((frame) => frame.type === "schedule.set");
    let ended = false;
    const off = server.deps.jobEvents.on("job.finished", (event: JobEventMap["job.finished"]) => {
      ended ||= event.jobId === job.id;
    });
    try {
      agent.send("job.finished", {
        job_id: job.id,
        status: "failed",
        exit_code: null,
        error: HELPER_REFUSAL,
      });
      await eventually(
        () => ended,
        (done) => done,
        { what: "the refused restore's end" },
      );
      await server.channel.idle();
    } finally {
      off();
    }
    expect(
      await server.deps.db
        .select()
        .from(alerts)
        .where(and(eq(alerts.hostId, host.id), isNull(alerts.resolvedAt))),
    ).toEqual([]);
    const listed = (await (await client.request("/api/hosts?state=failing")).json()) as {
      hosts: Array<{ id: string }>;
    };
    expect(listed.hosts.map((h) => h.id)).not.toContain(host.id);
    const [row] = await server.deps.db
      .select({ status: hosts.status })
      .from(hosts)
      .where(eq(hosts.id, host.id));
    expect(row?.status).toBe("online");

    const page = await (await client.request(`/jobs/${job.id}`)).text();
    expect(page).toContain('data-testid="job-status" data-status="failed">refused</strong>');
    expect(page).toContain(`data-testid="job-refusal">${HELPER_REFUSAL}</span>`);

    // A restore that failed once restic ran is the host's failure, as before.
    const broken = await seedJob(
      server.deps,
      { hostId: host.id, kind: "restore", actorKind: "user", params: {} },
      { status: "running", startedAt: server.deps.clock.now() },
    );
    agent.send("job.finished", { job_id: broken.id, status: "failed", exit_code: 1, error: "disk full" });
    await eventually(
      async () =>
        (
          await server.deps.db
            .select()
            .from(alerts)
            .where(and(eq(alerts.hostId, host.id), eq(alerts.kind, "restore_failed")))
        ).length,
      (n) => n === 1,
      { what: "restore_failed for the restore restic failed" },
    );
    await agent.close();
  });
});

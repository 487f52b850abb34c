/**
 * Issue 38.2's one action: every source group of a host restored whole from the newest of the
 * host's own snapshots under its tag, one restore job per group, in place (confirmed by the host's
 * name) or beside the files. A refusal sends nothing; a group without its own snapshot is named.
 */
import { jobs, sourceGroups } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { type CommandRunRestore, PROTOCOL_VERSION } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, expect, it } from "vitest";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { createRecordingConnection, type RecordingConnection } from "../testing/recording-connection.js";
import { seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

const snap = (n: number) => n.toString(16).padStart(64, "a");

let deps: TestDeps;
let client: TestClient;
let hostId: string;
let agent: RecordingConnection;

function restores() {
  return agent.frames
    .filter((frame) => frame.type === "command.run")
    .map((frame) => frame.payload as CommandRunRestore);
}

runDbSuite("recover every group of a host", (getDb) => {
  beforeEach(async () => {
    const started = await startSignedInApp({
      deps: { db: getDb() },
      users: [{ username: "olga", role: "operator" }],
    });
    deps = started.deps;
    client = started.users.olga;
    // A current agent: it leaves its own directories out of a restore beside the files.
    const { host } = await seedHost(deps, { name: "db-1", protocolVersion: PROTOCOL_VERSION });
    hostId = host.id;
    const now = new Date();
    for (const [name, includes] of [
      ["etc", ["/etc"]],
      ["nginx", ["/etc/nginx"]],
      ["data", ["/srv/data", "/srv/more"]],
      ["never", ["/opt/never"]],
      ["foreign", ["/opt/foreign"]],
    ] as const) {
      await deps.db.insert(sourceGroups).values({
        id: `01JGROUP${name.toUpperCase().padEnd(18, "0")}`,
        hostId,
        name,
        includes: [...includes],
        createdAt: now,
      });
    }
    const entry = (n: number, time: string, tags: string[], paths: string[], hostname = host.resticHost) => ({
      id: snap(n),
      short_id: snap(n).slice(0, 8),
      time,
      hostname,
      paths,
      tags,
      size_bytes: 1,
      file_count: 1,
    });
    await replaceSnapshots(deps.db, hostId, {
      refreshed_at: "2026-11-21T11:00:00Z",
      snapshots: [
        entry(1, "2026-11-19T10:00:00Z", ["etc"], ["/etc"]),
        entry(2, "2026-11-20T10:00:00Z", ["etc"], ["/etc"]),
        entry(3, "2026-11-20T09:00:00Z", ["data"], ["/srv/data", "/srv/more"]),
        entry(5, "2026-11-20T08:00:00Z", ["nginx"], ["/etc/nginx"]),
        // Another machine's snapshot in the shared repository is never this host's to restore.
        entry(4, "2026-11-21T09:00:00Z", ["foreign"], ["/opt/foreign"], "other-box"),
      ],
    });
    agent = createRecordingConnection(hostId);
    deps.hub.register(agent);
  });
  afterEach(async () => {
    await deps.close();
  });

  it("refuses an unconfirmed in-place recovery naming the field, and sends nothing", async () => {
    const res = await client.json("POST", `/api/hosts/${hostId}/recover`, {
      in_place: true,
      confirm_hostname: "DB-1",
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/^confirm_hostname: /);
    expect(restores()).toEqual([]);
    expect(await deps.db.select().from(jobs)).toEqual([]);
    const bad = await client.json("POST", `/api/hosts/${hostId}/recover`, {
      in_place: false,
      target_dir: "rel",
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/^target_dir: /);
    expect(
      (await client.json("POST", `/api/hosts/${hostId}/recover`, { confirm_hostname: "db-1" })).status,
    ).toBe(400);
  });

  it("restores each group in place from its newest own snapshot, one job per group, and names the rest", async () => {
    const res = await client.json("POST", `/api/hosts/${hostId}/recover`, {
      in_place: true,
      confirm_hostname: "db-1",
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const body = (await res.json()) as {
      started: Array<{ group: string; snapshot_id: string; job_id: string }>;
      skipped: Array<{ group: string; reason: string }>;
    };
    expect(body.started.map((s) => [s.group, s.snapshot_id])).toEqual([
      ["data", snap(3)],
      ["nginx", snap(5)],
    ]);
    // In place, /etc would overwrite the agent's own directory (the new machine's token): left to the wizard.
    expect(body.skipped.map((s) => s.group).sort()).toEqual(["etc", "foreign", "never"]);
    expect(body.skipped.find((s) => s.group === "etc")?.reason).toMatch(/agent's own directory/);
    const sent = restores();
    expect(
      sent.map((c) => [
        c.job_id,
        c.restore.snapshot_id,
        c.restore.paths,
        c.restore.in_place,
        c.restore.target_dir,
      ]),
    ).toEqual([
      [body.started[0]?.job_id, snap(3), ["/srv/data", "/srv/more"], true, "/"],
      [body.started[1]?.job_id, snap(5), ["/etc/nginx"], true, "/"],
    ]);
    const rows = await deps.db.select().from(jobs).where(eq(jobs.hostId, hostId));
    expect(rows.map((row) => [row.id, row.kind]).sort()).toEqual(
      body.started.map((started) => [started.job_id, "restore"]).sort(),
    );
  });

  it("restores beside the files under a directory of each job's own, from the host page too", async () => {
    const page = await (await client.request(`/hosts/${hostId}`)).text();
    expect(page).toContain('data-testid="recover-host"');
    const res = await client.form(
      `/hosts/${hostId}/recover`,
      { _csrf: csrfFrom(page), where: "directory", target_dir: "", confirm_hostname: "" },
      { Accept: "text/html", Referer: `${deps.config.baseUrl}/hosts/${hostId}` },
    );
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe(`/hosts/${hostId}/jobs`);
    const sent = restores();
    // Beside the files, /etc is fine: all three groups with a snapshot of their own come back.
    expect(sent).toHaveLength(3);
    for (const command of sent) {
      expect(command.restore).toMatchObject({ in_place: false });
      expect(command.restore.target_dir).toBe(`$HOME/fleetback-restore/${command.job_id}/`);
    }
  });

  it("answers 503 for an offline host and starts nothing", async () => {
    deps.hub.unregister(agent);
    const res = await client.json("POST", `/api/hosts/${hostId}/recover`, { in_place: false });
    expect(res.status).toBe(503);
    expect(await deps.db.select().from(jobs)).toEqual([]);
  });
});

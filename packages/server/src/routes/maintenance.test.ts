import { auditLog, hostCredentials, jobs, maintenance } from "@fleetback/db";
import { formatBytes } from "@fleetback/web";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyRepoStats } from "../snapshots/repo-stats.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { createRecordingConnection, type RecordingConnection } from "../testing/recording-connection.js";
import { recordedOutput } from "../testing/restic-binaries.js";
import { bindCredentials, seedHost, seedJob } from "../testing/seed.js";
import { type SignedInApp, startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

const REPO = { url: "rest:https://backup.example.org/db-01/", username: "db-01", password: "repo-pass" };

let deps: TestDeps;
let admin: TestClient;
let addUser: SignedInApp["addUser"];
let hostId: string;
let agent: RecordingConnection;

beforeEach(async () => {
  ({ deps, admin, addUser } = await startSignedInApp({ deps: { config: { timeZone: "Europe/Berlin" } } }));
  hostId = (await seedHost(deps, { name: "db-01" })).host.id;
  await bindCredentials(deps, hostId, { repo: REPO });
  agent = createRecordingConnection(hostId);
  deps.hub.register(agent);
});
afterEach(async () => {
  await deps.close();
});

const url = () => `/api/hosts/${hostId}/maintenance`;

describe("maintenance record", () => {
  it("is created with the default cadences on first read, in the configured zone", async () => {
    expect(await deps.db.select().from(maintenance)).toEqual([]);
    const res = await admin.json("GET", url());
    expect(res.status).toBe(200);
    const { maintenance: record } = (await res.json()) as { maintenance: Record<string, unknown> };
    expect(record).toMatchObject({
      time_zone: "Europe/Berlin",
      forget_cron: "0 3 * * *",
      forget_enabled: true,
      prune_cron: "0 4 * * 0",
      prune_enabled: true,
      check_cron: "0 5 1 * *",
      check_enabled: true,
      check_read_data_subset: "5%",
      // The test clock is 2026-11-21T12:00Z; 03:00 in Berlin is 02:00Z, 05:00 on the 1st is 04:00Z.
      next_forget_at: "2026-11-22T02:00:00.000Z",
      next_check_at: "2026-12-01T04:00:00.000Z",
    });
    expect(await deps.db.select().from(maintenance)).toHaveLength(1);
  });

  it("edits cadences; a bad cron or subset is a 400 naming the field and writes nothing", async () => {
    const ok = await admin.json("PUT", url(), { forget_cron: "30 1 * * *", check_read_data_subset: "1/10" });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({
      maintenance: { forget_cron: "30 1 * * *", check_read_data_subset: "1/10", prune_cron: "0 4 * * 0" },
    });
    for (const [body, field] of [
      [{ forget_cron: "61 * * * *" }, "forget_cron"],
      [{ prune_cron: "@weekly" }, "prune_cron"],
      [{ check_read_data_subset: "5 percent" }, "check_read_data_subset"],
      [{ check_enabled: "yes" }, "check_enabled"],
      [{ forget_hour: 3 }, "forget_hour"],
    ] as const) {
      const res = await admin.json("PUT", url(), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(new RegExp(`^${field}: `));
    }
    const [row] = await deps.db.select().from(maintenance);
    expect(row).toMatchObject({ forgetCron: "30 1 * * *", pruneCron: "0 4 * * 0", checkEnabled: true });
  });

  it("is edited from the Maintenance tab; a bad cron comes back as a toast", async () => {
    const page = await admin.request(`/hosts/${hostId}/maintenance`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Europe/Berlin");
    expect(html).toContain('data-testid="tab-maintenance"');
    const csrf = csrfFrom(html);
    const fields = {
      _csrf: csrf,
      forget_cron: "0 2 * * *",
      forget_enabled: "on",
      prune_cron: "0 4 * * 6",
      check_cron: "0 5 1 * *",
      check_enabled: "on",
      check_read_data_subset: "",
    };
    const saved = await admin.form(`/hosts/${hostId}/maintenance`, fields, { "HX-Request": "true" });
    expect(saved.status).toBeLessThan(400);
    expect(await deps.db.select().from(maintenance)).toEqual([
      expect.objectContaining({ forgetCron: "0 2 * * *", pruneEnabled: false, checkReadDataSubset: "" }),
    ]);
    const bad = await admin.form(
      `/hosts/${hostId}/maintenance`,
      { ...fields, check_cron: "every day" },
      { "HX-Request": "true" },
    );
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/^check_cron: /);
  });
});

describe("manual jobs", () => {
  it("forget needs a group with a retention policy and carries every such group", async () => {
    const refused = await admin.json("POST", `/api/hosts/${hostId}/jobs`, { kind: "forget" });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { message: string }).message).toMatch(/retention policy/);
    await admin.json("POST", `/api/hosts/${hostId}/source-groups`, {
      name: "etc",
      includes: ["/etc"],
      retention_policy: { daily: 7, within: "30d" },
    });
    await admin.json("POST", `/api/hosts/${hostId}/source-groups`, { name: "tmp", includes: ["/tmp"] });
    const res = await admin.json("POST", `/api/hosts/${hostId}/jobs`, { kind: "forget" });
    expect(res.status).toBe(201);
    expect(agent.frames.at(-1)).toMatchObject({
      type: "command.run",
      payload: { kind: "forget", forget_groups: [{ tag: "etc", keep: { daily: 7, within: "30d" } }] },
    });
    const again = await admin.json("POST", `/api/hosts/${hostId}/jobs`, { kind: "forget" });
    expect(again.status).toBe(409);
  });

  it("prune and unlock need admin credentials, which are pushed before the command", async () => {
    const refused = await admin.json("POST", `/api/hosts/${hostId}/jobs`, { kind: "prune" });
    expect(refused.status).toBe(409);
    expect(await deps.db.select().from(jobs)).toEqual([]);
    const bound = await admin.json("PUT", `/api/hosts/${hostId}/admin-credentials`, {
      url: REPO.url,
      username: "admin",
      password: "admin-pass",
    });
    expect(bound.status).toBe(200);
    const from = agent.frames.length;
    const res = await admin.json("POST", `/api/hosts/${hostId}/jobs`, { kind: "unlock" });
    expect(res.status).toBe(201);
    expect(agent.frames.slice(from).map((frame) => frame.type)).toEqual(["config.update", "command.run"]);
    expect(agent.frames.at(-1)?.payload).toMatchObject({ kind: "unlock", requires_admin_creds: true });
  });

  it("only an admin may start a prune: an operator gets 403 and nothing is sent (issue 13)", async () => {
    const operator = await addUser("oper", "operator");
    await admin.json("PUT", `/api/hosts/${hostId}/admin-credentials`, {
      url: REPO.url,
      username: "admin",
      password: "admin-pass",
    });
    const page = await (await operator.request(`/hosts/${hostId}/maintenance`)).text();
    expect(page).toContain('data-testid="start-forget"');
    expect(page).not.toContain('data-testid="start-prune"');
    expect(await (await admin.request(`/hosts/${hostId}/maintenance`)).text()).toContain(
      'data-testid="start-prune"',
    );
    const from = agent.frames.length;
    const refused = await operator.json("POST", `/api/hosts/${hostId}/jobs`, { kind: "prune" });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toMatch(/^kind: .*only an admin/);
    expect(agent.frames.slice(from)).toEqual([]);
    expect(await deps.db.select().from(jobs)).toEqual([]);
    const res = await admin.json("POST", `/api/hosts/${hostId}/jobs`, { kind: "prune" });
    expect(res.status).toBe(201);
    const [entry] = (await deps.db.select().from(auditLog)).filter((row) => row.action === "job.prune");
    expect(entry).toMatchObject({ targetKind: "job" });
  });

  it("check reads the record's data subset; an offline host is a 503 and creates nothing", async () => {
    const res = await admin.json("POST", `/api/hosts/${hostId}/jobs`, { kind: "check" });
    expect(res.status).toBe(201);
    expect(agent.frames.at(-1)?.payload).toMatchObject({ kind: "check", check: { read_data_subset: "5%" } });
    deps.hub.unregister(agent);
    await deps.db.delete(jobs);
    const offline = await admin.json("POST", `/api/hosts/${hostId}/jobs`, { kind: "check" });
    expect(offline.status).toBe(503);
    expect(await deps.db.select().from(jobs).where(eq(jobs.hostId, hostId))).toEqual([]);
  });
});

describe("repository stats", () => {
  it("applies only the fields a report carries", async () => {
    const empty = await admin.json("GET", `/api/hosts/${hostId}/stats`);
    expect(await empty.json()).toMatchObject({
      stats: { last_check_status: null, stored_size_bytes: null, uncompressed_size_bytes: null },
    });
    await applyRepoStats(
      deps.db,
      hostId,
      { total_size_bytes: 4096, raw_size_bytes: 2048, compression_ratio: 2 },
      deps.clock.now(),
    );
    await applyRepoStats(
      deps.db,
      hostId,
      { last_check_status: "ok", last_check_at: "2026-11-21T05:00:00Z" },
      deps.clock.now(),
    );
    const res = await admin.json("GET", `/api/hosts/${hostId}/stats`);
    expect(await res.json()).toMatchObject({
      stats: {
        last_check_status: "ok",
        last_check_at: "2026-11-21T05:00:00.000Z",
        stored_size_bytes: 2048,
        uncompressed_size_bytes: 4096,
        compression_ratio: 2,
        last_prune_at: null,
      },
    });
    const page = await (await admin.request(`/hosts/${hostId}/maintenance`)).text();
    expect(page).toMatch(/data-testid="last-check-status"><span class="status-ok">ok<\/span>/);
  });

  // Issue 17: the page showed the uncompressed size as "Stored size". The agent maps restic's
  // raw-data stats onto the frozen wire names (packages/agent/src/jobs/raw-data-stats.ts, whose
  // test replays the same recordings); here the recorded output of each version goes through
  // that mapping to the API and the page, which must name restic's numbers for what they are.
  for (const version of ["0.14.0", "0.18.0"] as const) {
    it(`restic ${version}: stored and uncompressed sizes are restic's total_size and total_uncompressed_size`, async () => {
      const restic = JSON.parse(recordedOutput(version, "stats-raw.stdout")) as {
        total_size: number;
        total_uncompressed_size?: number;
        snapshots_count: number;
      };
      // As the agent reports it: restic 0.14 has no uncompressed size at all.
      await applyRepoStats(
        deps.db,
        hostId,
        {
          raw_size_bytes: restic.total_size,
          ...(restic.total_uncompressed_size === undefined
            ? {}
            : { total_size_bytes: restic.total_uncompressed_size }),
          snapshot_count: restic.snapshots_count,
        },
        deps.clock.now(),
      );
      const { stats } = (await (await admin.json("GET", `/api/hosts/${hostId}/stats`)).json()) as {
        stats: Record<string, unknown>;
      };
      expect(stats.stored_size_bytes).toBe(restic.total_size);
      expect(stats.uncompressed_size_bytes).toBe(restic.total_uncompressed_size ?? null);
      // The deprecated aliases keep their old meaning for existing clients.
      expect(stats.raw_size_bytes).toBe(stats.stored_size_bytes);
      expect(stats.total_size_bytes).toBe(stats.uncompressed_size_bytes);

      const page = await (await admin.request(`/hosts/${hostId}/maintenance`)).text();
      const cell = (testid: string) => new RegExp(`data-testid="${testid}">([^<]*)`).exec(page)?.[1]?.trim();
      expect(cell("stats-size")).toBe(formatBytes(restic.total_size));
      if (restic.total_uncompressed_size === undefined) {
        expect(cell("stats-uncompressed")).toBe("–");
        expect(page).toContain("restic before 0.15 does not report it");
      } else {
        expect(restic.total_uncompressed_size).toBeGreaterThan(restic.total_size);
        expect(cell("stats-uncompressed")).toBe(formatBytes(restic.total_uncompressed_size));
      }
    });
  }
});

/** The opening tag of a Run now button, or undefined when the page does not offer it. */
function button(page: string, kind: string): string | undefined {
  return new RegExp(`<button[^>]*data-testid="start-${kind}"[^>]*>`).exec(page)?.[0];
}

describe("Run now on the Maintenance tab (issue 17)", () => {
  it("a started job answers with its live job page: HX-Redirect for htmx, 303 for a plain form", async () => {
    const csrf = csrfFrom(await (await admin.request(`/hosts/${hostId}/maintenance`)).text());
    const viaHtmx = await admin.form(
      `/hosts/${hostId}/jobs`,
      { _csrf: csrf, kind: "check" },
      { "HX-Request": "true" },
    );
    expect(viaHtmx.status).toBe(204);
    const [check] = await deps.db.select().from(jobs).where(eq(jobs.kind, "check"));
    expect(check).toBeDefined();
    expect(viaHtmx.headers.get("HX-Redirect")).toBe(`/jobs/${check?.id}`);
    expect(agent.frames.at(-1)?.payload).toMatchObject({ kind: "check", job_id: check?.id });

    const plain = await admin.form(`/hosts/${hostId}/jobs`, { _csrf: csrf, kind: "unlock" });
    // Unlock needs the admin slot: refused, and no job page to go to.
    expect(plain.status).toBe(409);
    expect(plain.headers.get("Location")).toBeNull();

    const initialise = await admin.form(`/hosts/${hostId}/jobs`, { _csrf: csrf, kind: "init" });
    expect(initialise.status).toBe(303);
    const [init] = await deps.db.select().from(jobs).where(eq(jobs.kind, "init"));
    expect(initialise.headers.get("Location")).toBe(`/jobs/${init?.id}`);
    const jobPage = await admin.request(initialise.headers.get("Location") ?? "");
    expect(jobPage.status).toBe(200);
    // The JSON API is unchanged: 201 with the job id (a second check waits for the first).
    await deps.db.update(jobs).set({ status: "succeeded" }).where(eq(jobs.kind, "check"));
    const api = await admin.json("POST", `/api/hosts/${hostId}/jobs`, { kind: "check" });
    expect(api.status).toBe(201);
    expect(await api.json()).toMatchObject({ job_id: expect.any(String) });
  });

  it("Prune now and Unlock are disabled with the reason until the admin credentials are bound", async () => {
    const without = await (await admin.request(`/hosts/${hostId}/maintenance`)).text();
    expect(button(without, "prune")).toMatch(/ disabled title="needs the admin credentials/);
    expect(button(without, "unlock")).toMatch(/ disabled /);
    expect(button(without, "check")).not.toMatch(/disabled/);
    expect(without).toMatch(
      /data-testid="admin-refusal">Prune now and Unlock are unavailable: needs the admin credentials of the repository/,
    );
    await admin.json("PUT", `/api/hosts/${hostId}/admin-credentials`, {
      url: REPO.url,
      username: "admin",
      password: "admin-pass",
    });
    const bound = await (await admin.request(`/hosts/${hostId}/maintenance`)).text();
    expect(button(bound, "prune")).not.toMatch(/disabled/);
    expect(button(bound, "unlock")).not.toMatch(/disabled/);
    expect(bound).not.toContain('data-testid="admin-refusal"');
  });

  it("Initialise is offered until a job proves the repository exists with the current credentials", async () => {
    // The seeded credentials carry the database's clock; these jobs carry the test clock.
    await deps.db.update(hostCredentials).set({ updatedAt: deps.clock.now() });
    const page = async () => (await admin.request(`/hosts/${hostId}/maintenance`)).text();
    expect(button(await page(), "init")).toBeDefined();

    // Failed or unrelated jobs prove nothing.
    await seedJob(deps, { hostId, kind: "init", actorKind: "system" }, { status: "failed" });
    await seedJob(deps, { hostId, kind: "restore", actorKind: "user" }, { status: "succeeded" });
    expect(button(await page(), "init")).toBeDefined();

    deps.clock.advance(60_000);
    await seedJob(
      deps,
      { hostId, kind: "backup", actorKind: "schedule" },
      { status: "succeeded", finishedAt: deps.clock.now() },
    );
    const known = await page();
    expect(button(known, "init")).toBeUndefined();
    expect(known).toMatch(
      /data-testid="repo-initialised">Initialise is not offered: the repository exists \(a backup job succeeded/,
    );

    // New repository credentials may name an empty repository: Initialise comes back.
    deps.clock.advance(60_000);
    const rebound = await admin.json("PUT", `/api/hosts/${hostId}/repo-credentials`, {
      url: "rest:https://backup.example.org/db-01-new/",
      username: "db-01",
      password: "new-pass",
    });
    expect(rebound.status).toBe(200);
    const afterRebind = await page();
    expect(button(afterRebind, "init")).toBeDefined();
    expect(afterRebind).not.toContain('data-testid="repo-initialised"');
  });
});

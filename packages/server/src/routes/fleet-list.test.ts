/**
 * The host list (`/hosts`, `/partials/fleet`, `GET /api/hosts`): per host its newest snapshot,
 * last finished job, backup freshness and next scheduled run; filtered by state and by a search
 * on name or tag, sorted, paged, and its query validated. A small fleet inserted row by row:
 *   web-ok        online, hourly group "etc" snapshotted 25 min ago, last backup succeeded;
 *   db-late       offline, daily group "pg" last snapshotted 3 days ago: overdue;
 *   mail-failing  online, its backup just failed (open backup_failed alert): the host that used
 *                 to look like a healthy "online";
 *   idle          offline, no group, no snapshot, no job;
 *   web_2         online, hourly group "etc", a job still running after a succeeded check.
 */
import { testEngines } from "@fleetback/db/testing";
import type { JobKind, JobStatus, Snapshot as WireSnapshot } from "@fleetback/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { raiseAlert } from "../alerts/alerts.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import type { TestClient } from "../testing/http.js";
import { bindCredentials, resticHostOf, seedHost, seedJob, seedScheduledGroup } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

/** The test clock's instant (testing/test-deps.ts). */
const NOW = new Date("2026-11-21T12:00:00Z");
const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * 3_600_000);

interface HostJson {
  id: string;
  name: string;
  status: string;
  failing: boolean;
  last_snapshot_at: string | null;
  last_job: { id: string; kind: string; status: string; finished_at: string | null } | null;
  freshness: string | null;
  next_run_at: string | null;
}

interface ListJson {
  hosts: HostJson[];
  total: number;
  page: number;
  pages: number;
  limit: number;
  sort: string;
  order: string;
}

for (const engine of testEngines()) {
  describe(`host list (${engine})`, () => {
    let deps: TestDeps;
    let admin: TestClient;
    const ids = { web: "", db: "", mail: "", idle: "", web2: "" };
    const jobIds = { web: "", mail: "", web2: "" };

    async function groupWithSnapshot(hostId: string, name: string, cron: string, snapshotAt: Date) {
      await seedScheduledGroup(deps, hostId, {
        name,
        cron,
        idsAt: NOW,
        scheduleUpdatedAt: hoursAgo(24 * 30),
      });
      const id = `${hostId.toLowerCase()}`.padEnd(64, "0").replace(/[^0-9a-f]/g, "a");
      const snapshot: WireSnapshot = {
        id,
        short_id: id.slice(0, 8),
        time: snapshotAt.toISOString(),
        hostname: await resticHostOf(deps, hostId),
        paths: [`/${name}`],
        tags: [name],
        size_bytes: 1,
        file_count: 1,
      };
      await replaceSnapshots(deps.db, hostId, { snapshots: [snapshot], refreshed_at: NOW.toISOString() });
    }

    /** A job created at the clock's time, started and (unless still running) ended so many hours ago. */
    async function job(
      hostId: string,
      kind: JobKind,
      actorKind: "schedule" | "user",
      status: JobStatus,
      startedHoursAgo: number,
      finishedHoursAgo?: number,
    ) {
      const finished = finishedHoursAgo === undefined ? {} : { finishedAt: hoursAgo(finishedHoursAgo) };
      return seedJob(
        deps,
        { hostId, kind, actorKind },
        { status, startedAt: hoursAgo(startedHoursAgo), ...finished },
      );
    }

    beforeAll(async () => {
      ({ deps, admin } = await startSignedInApp({ deps: { engine } }));
      const created = hoursAgo(24 * 60);
      const host = async (name: string, status: "online" | "offline") => {
        const id = (await seedHost(deps, { name, status, createdAt: created })).host.id;
        await bindCredentials(deps, id, { repo: { url: "s3:https://s3.example/b", password: "repo-pw" } });
        return id;
      };
      Object.assign(ids, {
        web: await host("web-ok", "online"),
        db: await host("db-late", "offline"),
        mail: await host("mail-failing", "online"),
        idle: await host("idle", "offline"),
        web2: await host("web_2", "online"),
      });
      await groupWithSnapshot(ids.web, "etc", "30 * * * *", hoursAgo(25 / 60));
      await groupWithSnapshot(ids.db, "pg", "0 2 * * *", hoursAgo(72));
      await groupWithSnapshot(ids.mail, "mail", "15 * * * *", hoursAgo(1.5));
      await groupWithSnapshot(ids.web2, "etc", "30 * * * *", hoursAgo(0.2));
      await raiseAlert(
        deps,
        { hostId: ids.mail, kind: "backup_failed", dedupKey: "g" },
        { message: "backup failed" },
        hoursAgo(0.1),
      );
      // Not a failed job: does not make the host failing.
      await raiseAlert(
        deps,
        { hostId: ids.idle, kind: "agent_offline", dedupKey: "" },
        { message: "x" },
        NOW,
      );

      deps.clock.set(hoursAgo(3));
      jobIds.web = (await job(ids.web, "backup", "schedule", "succeeded", 3, 2.9)).id;
      deps.clock.set(hoursAgo(0.3));
      // mail-failing: a success, then the failure that is its last outcome.
      await job(ids.mail, "backup", "schedule", "succeeded", 1.5, 1.4);
      deps.clock.set(hoursAgo(0.2));
      jobIds.mail = (await job(ids.mail, "backup", "schedule", "failed", 0.2, 0.1)).id;
      jobIds.web2 = (await job(ids.web2, "check", "user", "succeeded", 0.2, 0.15)).id;
      deps.clock.set(hoursAgo(0.05));
      // Still running: not an outcome, so the check above stays web_2's last job.
      await job(ids.web2, "backup", "user", "running", 0.05);
      deps.clock.set(NOW);
    });
    afterAll(async () => {
      await deps.close();
    });

    async function list(query: string): Promise<ListJson> {
      const res = await admin.request(`/api/hosts${query}`);
      expect([query, res.status]).toEqual([query, 200]);
      return (await res.json()) as ListJson;
    }
    const names = (body: ListJson) => body.hosts.map((host) => host.name);

    it("shows each host's last snapshot, last job outcome, freshness and next run", async () => {
      const body = await list("");
      expect(body).toMatchObject({ total: 5, page: 1, pages: 1, limit: 100, sort: "name", order: "asc" });
      const byName = new Map(body.hosts.map((host) => [host.name, host]));
      expect(byName.get("mail-failing")).toMatchObject({
        status: "online",
        failing: true,
        last_snapshot_at: hoursAgo(1.5).toISOString(),
        last_job: {
          id: jobIds.mail,
          kind: "backup",
          status: "failed",
          finished_at: hoursAgo(0.1).toISOString(),
        },
        // Hourly at a quarter past, last snapshot at 10:30: due since 11:15, overdue from 12:15.
        freshness: "due",
        next_run_at: "2026-11-21T12:15:00.000Z",
      });
      expect(byName.get("web-ok")).toMatchObject({
        failing: false,
        last_job: { id: jobIds.web, status: "succeeded" },
        freshness: "fresh",
        next_run_at: "2026-11-21T12:30:00.000Z",
      });
      expect(byName.get("db-late")).toMatchObject({
        status: "offline",
        last_snapshot_at: hoursAgo(72).toISOString(),
        last_job: null,
        freshness: "overdue",
        next_run_at: "2026-11-22T02:00:00.000Z",
      });
      expect(byName.get("idle")).toMatchObject({
        failing: false,
        last_snapshot_at: null,
        last_job: null,
        freshness: null,
        next_run_at: null,
      });
      expect(byName.get("web_2")?.last_job).toMatchObject({ id: jobIds.web2, kind: "check" });
    });

    it("filters by state and by a search on name or tag, escaping LIKE's wildcards", async () => {
      expect(names(await list("?state=failing"))).toEqual(["mail-failing"]);
      expect(names(await list("?state=overdue"))).toEqual(["db-late"]);
      expect(names(await list("?state=offline"))).toEqual(["db-late", "idle"]);
      expect(names(await list("?q=WEB"))).toEqual(["web-ok", "web_2"]);
      // "_" is a character, not LIKE's any-character: web-ok does not match.
      expect(names(await list("?q=web_"))).toEqual(["web_2"]);
      // A tag (the group's name) finds its hosts.
      expect(names(await list("?q=etc"))).toEqual(["web-ok", "web_2"]);
      expect(names(await list("?q=pg&state=overdue"))).toEqual(["db-late"]);
      expect(await list("?q=pg&state=online")).toMatchObject({ hosts: [], total: 0 });
    });

    it("sorts by name, last snapshot (never-backed-up first) and status (problems first)", async () => {
      expect(names(await list("?sort=name&order=desc"))).toEqual([
        "web_2",
        "web-ok",
        "mail-failing",
        "idle",
        "db-late",
      ]);
      expect(names(await list("?sort=last_snapshot"))).toEqual([
        "idle",
        "db-late",
        "mail-failing",
        "web-ok",
        "web_2",
      ]);
      expect(names(await list("?sort=last_snapshot&order=desc"))).toEqual([
        "web_2",
        "web-ok",
        "mail-failing",
        "db-late",
        "idle",
      ]);
      expect(names(await list("?sort=status"))).toEqual([
        "mail-failing",
        "db-late",
        "idle",
        "web-ok",
        "web_2",
      ]);
      expect(names(await list("?sort=status&order=desc"))).toEqual([
        "web-ok",
        "web_2",
        "db-late",
        "idle",
        "mail-failing",
      ]);
    });

    it("pages through the list without gaps or repeats, in every sort", async () => {
      for (const sort of ["name", "last_snapshot", "status"]) {
        const seen: string[] = [];
        for (let page = 1; page <= 3; page++) {
          const body = await list(`?sort=${sort}&limit=2&page=${page}`);
          expect(body).toMatchObject({ total: 5, pages: 3, page, limit: 2 });
          seen.push(...names(body));
        }
        expect(seen).toEqual(names(await list(`?sort=${sort}`)));
      }
      // Past the end: no rows, but still the right total.
      expect(await list("?limit=2&page=9")).toMatchObject({ hosts: [], total: 5, pages: 3 });
      // A limit above the maximum is bounded, not refused.
      expect((await list("?limit=999")).limit).toBe(500);
    });

    it("refuses a malformed query with a 400 naming the field", async () => {
      for (const [query, field] of [
        ["?sort=size", "sort"],
        ["?order=up", "order"],
        ["?page=0", "page"],
        ["?page=-1", "page"],
        ["?limit=0", "limit"],
        ["?limit=ten", "limit"],
        ["?state=broken", "state"],
        [`?q=${"x".repeat(101)}`, "q"],
        ["?cursor=abc", "cursor"],
      ] as const) {
        for (const path of ["/api/hosts", "/hosts", "/partials/fleet"]) {
          const res = await admin.request(`${path}${query}`);
          expect([path, query, res.status]).toEqual([path, query, 400]);
          const body = (await res.json()) as { message: string };
          expect(body.message.startsWith(`${field}: `)).toBe(true);
        }
      }
    });

    it("renders the page: filter form, sortable headers, paging links, count and the new columns", async () => {
      // What the form sends when "Any" state and no search are chosen: no filter.
      const all = await (await admin.request("/hosts?q=&state=")).text();
      expect(all).toMatch(/<form method="get" action="\/hosts" role="search"/);
      expect(all).toContain('<strong data-testid="fleet-total">5</strong> hosts');
      // The active sort's header flips the order; the others start ascending.
      expect(all).toMatch(/aria-sort="ascending"><a href="\/hosts\?order=desc"[^>]*data-testid="sort-name"/);
      expect(all).toMatch(/<a href="\/hosts\?sort=last_snapshot"[^>]*data-testid="sort-last_snapshot"/);
      const row = (html: string, id: string) =>
        new RegExp(`data-host-id="${id}">([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? "";
      const mail = row(all, ids.mail);
      expect(mail).toContain('data-testid="host-failing">failing</a>');
      expect(mail).toContain(
        `<a href="/jobs/${jobIds.mail}" class="status-failed" data-status="failed">backup failed</a>`,
      );
      // The one time format of every page (issue 35): local time with its zone, ISO on hover.
      expect(mail).toContain(
        '<time datetime="2026-11-21T10:30:00Z" title="2026-11-21T10:30:00Z">21 Nov, 10:30 UTC</time>',
      );
      expect(mail).toContain('class="freshness-due" data-state="due">due</a>');
      expect(mail).toContain(
        '<time datetime="2026-11-21T12:15:00Z" title="2026-11-21T12:15:00Z">21 Nov, 12:15 UTC</time>',
      );
      expect(row(all, ids.idle)).toContain('class="freshness-no_group" data-state="no_group">no group</a>');
      expect(all).not.toMatch(/style=/);

      // "e" is in every name but mail-failing's (and its tag's): 4 hosts, 2 pages of 2.
      const second = await (await admin.request("/hosts?sort=status&limit=2&page=2&q=e")).text();
      expect(second).toContain(
        'Hosts 3–4 of <strong data-testid="fleet-total">4</strong> hosts matching “e”',
      );
      expect(second).toContain("<li>Page 2 of 2</li>");
      expect(second).toContain('href="/hosts?q=e&amp;sort=status&amp;limit=2" hx-get=');
      expect(second).not.toContain('data-testid="fleet-next"');
      const first = await (await admin.request("/hosts?sort=status&limit=2&q=e")).text();
      expect(first).toContain('href="/hosts?q=e&amp;sort=status&amp;page=2&amp;limit=2" hx-get=');
      expect(first).not.toContain('data-testid="fleet-prev"');
      expect(second).toContain('hx-get="/partials/fleet?q=e&amp;sort=status&amp;page=2&amp;limit=2"');
      // The form keeps the sort and page size, and shows the search.
      expect(second).toContain('<input type="hidden" name="sort" value="status">');
      expect(second).toContain('name="q" value="e"');

      const partial = await (await admin.request("/partials/fleet?state=failing")).text();
      expect(
        [...partial.matchAll(/data-testid="host-row" data-host-id="([^"]+)"/g)].map((m) => m[1]),
      ).toEqual([ids.mail]);
      const none = await (await admin.request("/hosts?q=nothing-like-this")).text();
      expect(none).toContain("No host matches “nothing-like-this”.");
    });
  });
}

/**
 * The dashboard at `/`, its JSON twin and the host list it links to (`/hosts?state=`), over a
 * small fleet inserted row by row: an online host whose group is fresh, an offline host with two
 * overdue groups, an online host with an open alert whose group is due, and an offline idle host.
 */
import { testEngines } from "@fleetback/db/testing";
import type { Snapshot as WireSnapshot } from "@fleetback/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { raiseAlert } from "../alerts/alerts.js";
import { recordRepositorySize } from "../maintenance/repository-growth.js";
import { applyRepoStats } from "../snapshots/repo-stats.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import type { TestClient } from "../testing/http.js";
import { resticHostOf, seedHost, seedJob, seedScheduledGroup } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

/** The test clock's instant (testing/test-deps.ts). */
const NOW = new Date("2026-11-21T12:00:00Z");
const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * 3_600_000);

interface DashboardJson {
  hosts: Record<string, number>;
  groups: Record<string, number>;
  attention: Array<{
    host_name: string;
    group_name: string;
    state: string;
    last_snapshot_age_seconds: number;
  }>;
  jobs_24h: { by_status: Record<string, number>; hosts_shown: number };
  repository: {
    stored_bytes: number;
    hosts_reporting: number;
    daily: Array<{ day: string; stored_bytes: number | null }>;
  };
  open_alerts: number;
  newest_alerts: Array<{ kind: string; host_name: string }>;
}

for (const engine of testEngines()) {
  describe(`fleet dashboard (${engine})`, () => {
    let deps: TestDeps;
    let admin: TestClient;
    const ids = { web: "", db: "", mail: "", idle: "" };

    async function group(hostId: string, name: string, cron: string, snapshotAt: Date | undefined) {
      await seedScheduledGroup(deps, hostId, {
        name,
        cron,
        idsAt: NOW,
        scheduleUpdatedAt: hoursAgo(24 * 30),
      });
      return { name, snapshotAt };
    }

    async function snapshotsOf(
      hostId: string,
      tagged: Array<{ name: string; snapshotAt: Date | undefined }>,
    ) {
      const hostname = await resticHostOf(deps, hostId);
      const list: WireSnapshot[] = tagged.flatMap(({ name, snapshotAt }, index) => {
        if (!snapshotAt) {
          return [];
        }
        const id = `${hostId.toLowerCase()}${index}`.padEnd(64, "0").replace(/[^0-9a-f]/g, "a");
        return [
          {
            id,
            short_id: id.slice(0, 8),
            time: snapshotAt.toISOString(),
            hostname,
            paths: [`/${name}`],
            tags: [name],
            size_bytes: 1,
            file_count: 1,
          },
        ];
      });
      await replaceSnapshots(deps.db, hostId, { snapshots: list, refreshed_at: NOW.toISOString() });
    }

    beforeAll(async () => {
      ({ deps, admin } = await startSignedInApp({ deps: { engine } }));
      const created = hoursAgo(24 * 60);
      const web = (await seedHost(deps, { name: "web-ok", status: "online", createdAt: created })).host;
      const db = (await seedHost(deps, { name: "db-late", status: "offline", createdAt: created })).host;
      const mail = (await seedHost(deps, { name: "mail-failing", status: "online", createdAt: created }))
        .host;
      const idle = (await seedHost(deps, { name: "idle", status: "offline", createdAt: created })).host;
      Object.assign(ids, { web: web.id, db: db.id, mail: mail.id, idle: idle.id });

      // Hourly at half past, last snapshot at 11:35: fresh until 12:30.
      await snapshotsOf(web.id, [await group(web.id, "etc", "30 * * * *", hoursAgo(25 / 60))]);
      // Daily at 02:00, last snapshots 3 and 5 days ago: both overdue, the older one first.
      await snapshotsOf(db.id, [
        await group(db.id, "pg", "0 2 * * *", hoursAgo(72)),
        await group(db.id, "old", "0 2 * * *", hoursAgo(120)),
      ]);
      // Hourly at a quarter past, last snapshot at 10:30: due since 11:15, overdue only from 12:15.
      await snapshotsOf(mail.id, [await group(mail.id, "mail", "15 * * * *", hoursAgo(1.5))]);
      await raiseAlert(
        deps,
        { hostId: mail.id, kind: "backup_failed", dedupKey: "g" },
        { message: "backup failed: <b>disk full</b>" },
        hoursAgo(1),
      );
      // Health alerts are open too, but only a failed job's alert makes a host failing.
      await raiseAlert(
        deps,
        { hostId: idle.id, kind: "agent_offline", dedupKey: "" },
        { message: "offline" },
        hoursAgo(2),
      );
      await raiseAlert(
        deps,
        { hostId: db.id, kind: "backup_overdue", dedupKey: "" },
        { message: "overdue" },
        hoursAgo(2),
      );

      const started = hoursAgo(3);
      deps.clock.set(started);
      await seedJob(
        deps,
        { hostId: web.id, kind: "backup", actorKind: "schedule" },
        { status: "succeeded", startedAt: started, finishedAt: hoursAgo(2.9) },
      );
      deps.clock.set(hoursAgo(0.2));
      await seedJob(
        deps,
        { hostId: mail.id, kind: "backup", actorKind: "schedule" },
        { status: "failed", startedAt: hoursAgo(0.2), finishedAt: hoursAgo(0.1) },
      );
      deps.clock.set(NOW);

      for (const [hostId, raw, at] of [
        [web.id, 1024 ** 3, hoursAgo(24 * 3)],
        [web.id, 2 * 1024 ** 3, hoursAgo(1)],
        [db.id, 1024 ** 3, hoursAgo(24 * 10)],
      ] as const) {
        await recordRepositorySize(
          deps.db,
          await applyRepoStats(deps.db, hostId, { raw_size_bytes: raw }, at),
          at,
        );
      }
    });
    afterAll(async () => {
      await deps.close();
    });

    function count(html: string, state: string): { n: number; href: string } {
      const match = new RegExp(
        `<a href="([^"]+)" class="[^"]*" data-testid="count-${state}"><strong>(\\d+)</strong>`,
      ).exec(html);
      if (!match) {
        throw new Error(`no count for ${state}`);
      }
      return { href: (match[1] ?? "").replaceAll("&amp;", "&"), n: Number(match[2]) };
    }

    const hostRows = (html: string) =>
      [...html.matchAll(/data-testid="host-row" data-host-id="([^"]+)"/g)].map((m) => m[1]).sort();

    it("counts hosts by state, each number linking to the host list filtered to exactly those hosts", async () => {
      const res = await admin.request("/");
      expect(res.status).toBe(200);
      const html = await res.text();
      const expected = { online: 2, offline: 2, overdue: 1, failing: 1 };
      const members: Record<string, string[]> = {
        online: [ids.web, ids.mail],
        offline: [ids.db, ids.idle],
        overdue: [ids.db],
        failing: [ids.mail],
      };
      for (const [state, n] of Object.entries(expected)) {
        const shown = count(html, state);
        expect([state, shown]).toEqual([state, { n, href: `/hosts?state=${state}` }]);
        const list = await admin.request(shown.href);
        expect(list.status).toBe(200);
        const page = await list.text();
        expect(hostRows(page)).toEqual([...(members[state] ?? [])].sort());
        expect(page).toContain(`hx-get="/partials/fleet?state=${state}"`);
        expect(page).toContain(`data-testid="hosts-filter-${state}" aria-current="page"`);
      }
      expect(html).toContain('<a href="/hosts" data-testid="count-total">4 hosts in all</a>');
      expect(hostRows(await (await admin.request("/hosts")).text())).toEqual(Object.values(ids).sort());
    });

    it("lists the groups needing attention, overdue first by oldest snapshot, then due", async () => {
      const html = await (await admin.request("/")).text();
      const rows = [
        ...html.matchAll(
          /data-testid="attention-row" data-group-id="[^"]+" data-state="(\w+)">\s*<td data-label="Host"><a href="([^"]+)">([^<]+)<\/a><\/td>\s*<td data-label="Group">([^<]+)<\/td>/g,
        ),
      ].map((m) => [m[1], m[2], m[3], m[4]]);
      expect(rows).toEqual([
        ["overdue", `/hosts/${ids.db}/sources`, "db-late", "old"],
        ["overdue", `/hosts/${ids.db}/sources`, "db-late", "pg"],
        ["due", `/hosts/${ids.mail}/sources`, "mail-failing", "mail"],
      ]);
      expect(html).toContain(
        '<time datetime="2026-11-16T12:00:00Z" title="2026-11-16T12:00:00Z">16 Nov, 12:00 UTC</time>',
      );
      expect(html).not.toContain(">etc<");
    });

    it("draws the last 24 h of jobs, problem hosts first, with a text alternative", async () => {
      const html = await (await admin.request("/")).text();
      expect(html).toContain('data-testid="timeline-svg"');
      const order = [...html.matchAll(/<g class="timeline-row" data-host-id="([^"]+)">/g)].map((m) => m[1]);
      expect(order).toEqual([ids.db, ids.mail, ids.web, ids.idle]);
      expect(html).toMatch(
        /data-status="failed"[^>]*><title>backup: failed, 21 Nov, 11:48 UTC – 21 Nov, 11:54 UTC/,
      );
      expect(html).toContain('data-testid="timeline-text-row"');
      expect(html).not.toContain('data-testid="timeline-more"');
    });

    it("shows the repositories' size now and per day, and the newest open alerts", async () => {
      const html = await (await admin.request("/")).text();
      expect(html).toContain(
        '<strong data-testid="stored-now">3.00 GiB</strong> stored now by 2 repositories',
      );
      expect(html).toMatch(
        /<svg [^>]*class="chart"[^>]*aria-label="Repository size of the fleet per day \(UTC\)"/,
      );
      // The whole 30 days are on the axis; the days before the first report say they have no
      // figure, and the line starts at that report instead of at a made-up 0.
      const chart = /<svg [^>]*class="chart"[\s\S]*?<\/svg>/.exec(html)?.[0] ?? "";
      expect(chart).toContain(">no data before 2026-11-11</text>");
      const ticks = [...chart.matchAll(/<text class="chart-tick"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
      expect(ticks.some((label) => /10-2[3-9]|Oct/.test(label ?? ""))).toBe(true);
      const lineStart = Number(/<path class="chart-line"[^>]* d="M([0-9.]+)/.exec(chart)?.[1]);
      const noDataEnd = /<rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"/.exec(
        chart.slice(chart.indexOf('class="chart-no-data"')),
      );
      expect(lineStart).toBeCloseTo(Number(noDataEnd?.[1]) + Number(noDataEnd?.[2]), 1);
      expect(html.replace(/\s+/g, " ")).toContain(
        "last 30 days (UTC, from 2026-10-23): no figure before 2026-11-11, then from 1.00 GiB on 2026-11-11 to 3.00 GiB on 2026-11-21.",
      );
      expect(html).toContain("backup failed: &lt;b&gt;disk full&lt;/b&gt;");
      expect(html).toContain('<a href="/alerts" data-testid="alerts-link">All 3 open alerts</a>');
      expect(html).not.toMatch(/style=/);
    });

    it("answers the same numbers as JSON for scripts", async () => {
      const res = await admin.json("GET", "/api/dashboard");
      expect(res.status).toBe(200);
      const body = (await res.json()) as DashboardJson;
      expect(body.hosts).toEqual({ total: 4, online: 2, offline: 2, overdue: 1, failing: 1, unprotected: 4 });
      expect(body.groups).toEqual({ overdue: 2, due: 1, never: 0, fresh: 1, unscheduled: 0 });
      expect(body.attention.map((row) => [row.host_name, row.group_name, row.state])).toEqual([
        ["db-late", "old", "overdue"],
        ["db-late", "pg", "overdue"],
        ["mail-failing", "mail", "due"],
      ]);
      expect(body.attention[0]?.last_snapshot_age_seconds).toBe(120 * 3600);
      expect(body.jobs_24h).toMatchObject({ hosts_shown: 4, by_status: { succeeded: 1, failed: 1 } });
      expect(body.repository).toMatchObject({ stored_bytes: 3 * 1024 ** 3, hosts_reporting: 2 });
      expect(body.repository.daily).toHaveLength(30);
      expect(body.repository.daily.at(-1)).toEqual({ day: "2026-11-21", stored_bytes: 3 * 1024 ** 3 });
      expect(body.repository.daily.find((d) => d.day === "2026-11-15")?.stored_bytes).toBe(1024 ** 3);
      expect(body.repository.daily.find((d) => d.day === "2026-11-18")?.stored_bytes).toBe(2 * 1024 ** 3);
      // The first report is of 2026-11-11: the days before have no figure, which is not 0.
      const before = body.repository.daily.filter((d) => d.day < "2026-11-11");
      expect(before).toHaveLength(19);
      expect(before.every((d) => d.stored_bytes === null)).toBe(true);
      expect(body.repository.daily.find((d) => d.day === "2026-11-11")?.stored_bytes).toBe(1024 ** 3);
      expect(body.open_alerts).toBe(3);
      expect(body.newest_alerts.map((a) => [a.kind, a.host_name]).sort()).toEqual([
        ["agent_offline", "idle"],
        ["backup_failed", "mail-failing"],
        ["backup_overdue", "db-late"],
      ]);
      expect(body.newest_alerts[0]).toMatchObject({ kind: "backup_failed" });
    });

    it("refuses an unknown state or query field with a 400 naming the field, on the page and the partial", async () => {
      for (const path of ["/hosts?state=broken", "/partials/fleet?state=Online", "/hosts?sort=size"]) {
        const res = await admin.request(path);
        expect([path, res.status]).toEqual([path, 400]);
        const body = (await res.json()) as { message: string };
        expect(body.message).toMatch(
          path.includes("sort") ? /^sort: / : /^state: must be one of online, offline, overdue, failing/,
        );
      }
      const partial = await admin.request("/partials/fleet?state=failing", {
        headers: { "HX-Request": "true" },
      });
      expect(hostRows(await partial.text())).toEqual([ids.mail]);
    });
  });
}

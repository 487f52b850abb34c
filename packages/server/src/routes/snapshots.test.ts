/**
 * The snapshots tab and its API, in-process, on both engines: the list paged and filtered by tag
 * and source group, the compare form preset to the two newest snapshots of one group, the charts
 * (data added per backup, repository size) and a plain page title. Forgetting one snapshot is in
 * snapshots-forget.test.ts.
 */
import { repositorySizes, sourceGroups } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { ulid } from "ulidx";
import { expect, it } from "vitest";
import { seedJob } from "../testing/seed.js";
import {
  idOf,
  reportSnapshots,
  SLOW,
  type SnapshotsTab,
  snap,
  startSnapshotsTab,
} from "../testing/snapshots-tab.js";

async function addGroups(s: SnapshotsTab, names: string[]) {
  for (const name of names) {
    await s.deps.db
      .insert(sourceGroups)
      .values({ id: ulid(), hostId: s.hostId, name, includes: [`/${name}`] });
  }
}

function titleOf(html: string): string | undefined {
  return /<title>([^<]*)<\/title>/.exec(html)?.[1];
}

function selected(html: string, testid: string): string | undefined {
  const select = new RegExp(`data-testid="${testid}">([\\s\\S]*?)</select>`).exec(html)?.[1] ?? "";
  return /<option value="([^"]*)" selected>/.exec(select)?.[1];
}

function rowIds(html: string): string[] {
  return [...html.matchAll(/data-testid="snapshot-row" data-snapshot-id="([0-9a-f]+)"/g)].map(
    (m) => m[1] ?? "",
  );
}

runDbSuite("snapshots tab", (getDb) => {
  it(
    "lists most recent first with refreshed_at and total, paged by next_before",
    async () => {
      const { admin: viewer, deps, hostId } = await startSnapshotsTab(getDb());
      await reportSnapshots({ deps, hostId }, [
        snap(4, "2026-11-20T04:00:00Z"),
        snap(3, "2026-11-20T03:00:00Z"),
        snap(2, "2026-11-20T03:00:00Z"),
        snap(1, "2026-11-20T01:00:00Z"),
      ]);
      const first = await viewer.request(`/api/hosts/${hostId}/snapshots?limit=2`);
      expect(first.status).toBe(200);
      const page1 = (await first.json()) as {
        snapshots: Array<{ id: string; size_bytes: number; file_count: number }>;
        refreshed_at: string;
        total: number;
        next_before: string;
      };
      expect(page1.total).toBe(4);
      expect(page1.refreshed_at).toBe("2026-11-21T10:00:00.000Z");
      expect(page1.snapshots.map((s) => s.id)).toEqual([idOf(4), idOf(3)]);
      expect(page1.snapshots[0]).toMatchObject({
        size_bytes: 3 * 1024 * 1024,
        file_count: 1234,
        tags: ["srv"],
      });
      const second = await viewer.request(
        `/api/hosts/${hostId}/snapshots?limit=2&before=${encodeURIComponent(page1.next_before)}`,
      );
      const page2 = (await second.json()) as { snapshots: Array<{ id: string }>; next_before?: string };
      expect(page2.snapshots.map((s) => s.id)).toEqual([idOf(2), idOf(1)]);
      const third = await viewer.request(
        `/api/hosts/${hostId}/snapshots?limit=2&before=${encodeURIComponent(page2.next_before ?? "")}`,
      );
      expect(((await third.json()) as { snapshots: unknown[] }).snapshots).toEqual([]);
    },
    SLOW,
  );

  it(
    "answers an empty list for a host that never reported, 404 for an unknown host, 400 for a bad cursor",
    async () => {
      const { admin: viewer, hostId } = await startSnapshotsTab(getDb());
      const empty = (await (await viewer.request(`/api/hosts/${hostId}/snapshots`)).json()) as object;
      expect(empty).toMatchObject({ snapshots: [], refreshed_at: null, total: 0 });
      expect((await viewer.request("/api/hosts/01JD0000000000000000000000/snapshots")).status).toBe(404);
      expect((await viewer.request(`/api/hosts/${hostId}/snapshots?before=nonsense`)).status).toBe(400);
      expect((await viewer.request(`/api/hosts/${hostId}/snapshots?limit=0`)).status).toBe(400);
    },
    SLOW,
  );

  it(
    "filters by tag and by source group, in the API and on the page, with the pager keeping the filter",
    async () => {
      const s = await startSnapshotsTab(getDb());
      await addGroups(s, ["etc", "home"]);
      await reportSnapshots(s, [
        snap(6, "2026-11-20T06:00:00Z", ["home"], ["/home"]),
        snap(5, "2026-11-20T05:00:00Z", ["etc", "manual"], ["/etc"]),
        snap(4, "2026-11-20T04:00:00Z", ["home"], ["/home"]),
        snap(3, "2026-11-20T03:00:00Z", ["etc"], ["/etc"]),
        snap(2, "2026-11-20T02:00:00Z", ["etc"], ["/etc"]),
        snap(1, "2026-11-20T01:00:00Z", ["other"], ["/opt"]),
      ]);
      const api = async (query: string) => {
        const res = await s.admin.request(`/api/hosts/${s.hostId}/snapshots?${query}`);
        expect(res.status).toBe(200);
        return (await res.json()) as { snapshots: Array<{ id: string }>; next_before?: string };
      };
      expect((await api("group=etc")).snapshots.map((x) => x.id)).toEqual([idOf(5), idOf(3), idOf(2)]);
      expect((await api("tag=manual")).snapshots.map((x) => x.id)).toEqual([idOf(5)]);
      expect((await api("tag=other")).snapshots.map((x) => x.id)).toEqual([idOf(1)]);
      expect((await api("group=home&tag=manual")).snapshots).toEqual([]);
      expect((await api("group=&tag=")).snapshots).toHaveLength(6);
      // Paging within a filter: the cursor continues the filtered list.
      const firstTwo = await api("group=etc&limit=2");
      expect(firstTwo.snapshots.map((x) => x.id)).toEqual([idOf(5), idOf(3)]);
      const rest = await api(`group=etc&limit=2&before=${encodeURIComponent(firstTwo.next_before ?? "")}`);
      expect(rest.snapshots.map((x) => x.id)).toEqual([idOf(2)]);
      const unknown = await s.admin.request(`/api/hosts/${s.hostId}/snapshots?group=nope`);
      expect(unknown.status).toBe(400);
      expect(await unknown.text()).toContain("group: nope is not a source group of this host");

      const page = await s.admin.request(`/hosts/${s.hostId}/snapshots?group=home`);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(rowIds(html)).toEqual([idOf(6), idOf(4)]);
      expect(selected(html, "filter-group")).toBe("home");
      expect(html).toContain('<option value="manual">manual</option>');
      const paged = await (await s.admin.request(`/hosts/${s.hostId}/snapshots?group=etc&limit=2`)).text();
      expect(paged).toMatch(
        /href="\/hosts\/[0-9A-Z]+\/snapshots\?before=[^"]+&amp;group=etc" data-testid="snapshots-older"/,
      );
      const none = await (await s.admin.request(`/hosts/${s.hostId}/snapshots?tag=absent`)).text();
      expect(none).toContain("No snapshots match this filter.");
    },
    SLOW,
  );

  it(
    "presets the compare form to the two newest snapshots of one group, not the two newest overall",
    async () => {
      const s = await startSnapshotsTab(getDb());
      await addGroups(s, ["etc", "home"]);
      await reportSnapshots(s, [
        snap(5, "2026-11-20T05:00:00Z", ["home"], ["/home"]),
        snap(4, "2026-11-20T04:00:00Z", ["etc"], ["/etc"]),
        snap(3, "2026-11-20T03:00:00Z", ["etc"], ["/etc"]),
        snap(2, "2026-11-20T02:00:00Z", ["home"], ["/home"]),
        snap(1, "2026-11-20T01:00:00Z", ["etc"], ["/etc"]),
      ]);
      const html = await (await (await s.operator()).request(`/hosts/${s.hostId}/snapshots`)).text();
      // The newest snapshot (home) and the newest older one of the same group.
      expect(selected(html, "diff-b")).toBe(idOf(5));
      expect(selected(html, "diff-a")).toBe(idOf(2));
      // Filtered to etc: the two newest etc snapshots.
      const etc = await (await (await s.operator()).request(`/hosts/${s.hostId}/snapshots?group=etc`)).text();
      expect(selected(etc, "diff-b")).toBe(idOf(4));
      expect(selected(etc, "diff-a")).toBe(idOf(3));

      // The newest snapshot alone in its group: the newest group with two is preset.
      await reportSnapshots(s, [
        snap(9, "2026-11-21T09:00:00Z", ["home"], ["/home"]),
        snap(8, "2026-11-21T08:00:00Z", ["etc"], ["/etc"]),
        snap(7, "2026-11-21T07:00:00Z", ["etc"], ["/etc"]),
      ]);
      const alone = await (await (await s.operator()).request(`/hosts/${s.hostId}/snapshots`)).text();
      expect(selected(alone, "diff-b")).toBe(idOf(8));
      expect(selected(alone, "diff-a")).toBe(idOf(7));
    },
    SLOW,
  );

  it(
    "has a plain page title, and charts data added per backup and the repository size, not bytes processed",
    async () => {
      const s = await startSnapshotsTab(getDb());
      await reportSnapshots(s, [snap(2, "2026-11-20T02:00:00Z"), snap(1, "2026-11-20T01:00:00Z")]);
      for (const day of [1, 2]) {
        await seedJob(
          s.deps,
          { hostId: s.hostId, kind: "backup", actorKind: "system" },
          {
            status: "succeeded",
            startedAt: new Date(Date.UTC(2026, 10, day, 1)),
            finishedAt: new Date(Date.UTC(2026, 10, day, 1, 2)),
            summary: { total_bytes_processed: 5 * 1024 * 1024, data_added: 7 * 1024 },
          },
        );
      }
      const now = s.deps.clock.now();
      for (const [offset, raw] of [
        [2, 10],
        [1, 11],
      ] as const) {
        const day = new Date(now.getTime() - offset * 86_400_000).toISOString().slice(0, 10);
        await s.deps.db.insert(repositorySizes).values({
          hostId: s.hostId,
          day,
          rawSizeBytes: raw * 1024 * 1024,
          totalSizeBytes: 99,
          recordedAt: now,
        });
      }
      for (const client of [await s.viewer(), await s.operator(), s.admin]) {
        const res = await client.request(`/hosts/${s.hostId}/snapshots`);
        expect(res.status).toBe(200);
        const html = await res.text();
        expect(titleOf(html)).toBe("web-1: snapshots · Fleetback");
        expect(html).toContain('data-testid="tab-snapshots" aria-selected="true"');
        expect(html).toContain("3.00 MiB");
        expect(html).toContain(idOf(1).slice(-8));
        expect(html).not.toMatch(/style="/);
        const dataAdded = /data-testid="data-added-chart">([\s\S]*?)<\/figure>/.exec(html)?.[1] ?? "";
        expect(dataAdded.match(/<path class="chart-line"/g)).toHaveLength(1);
        expect(dataAdded).toContain("7.00 KiB");
        expect(dataAdded).not.toContain("5.00 MiB");
        const size = /data-testid="repository-size-chart">([\s\S]*?)<\/figure>/.exec(html)?.[1] ?? "";
        expect(size.match(/<path class="chart-line"/g)).toHaveLength(1);
        expect(size).toContain("11.0 MiB");
        expect(html).not.toContain("5.00 MiB");
      }
    },
    SLOW,
  );
});

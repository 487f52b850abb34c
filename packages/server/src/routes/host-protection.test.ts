/**
 * Issue 35.2: a host whose data is in no snapshot is never shown "fresh". One small fleet, at the
 * test clock's instant, seen on the host list (API and page), the dashboard (API and page) and a
 * host's source groups:
 *   bare     no repository credential;
 *   empty    a repository, no source group;
 *   manual   a repository, one group no schedule fires (what enrolment's initial paths made);
 *   new      a repository, a daily group created an hour ago, no snapshot yet: never backed up;
 *   lapsed   as new but created two days ago: past its first deadline, so overdue;
 *   ok       a repository, an hourly group snapshotted 10 minutes ago: fresh.
 */
import { testEngines } from "@fleetback/db/testing";
import type { Snapshot as WireSnapshot } from "@fleetback/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import type { TestClient } from "../testing/http.js";
import { bindCredentials, resticHostOf, seedHost, seedScheduledGroup } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

const NOW = new Date("2026-11-21T12:00:00Z");
const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * 3_600_000);
const repo = { url: "s3:https://s3.example/bucket", password: "repo-pw" };

for (const engine of testEngines()) {
  describe(`host protection (${engine})`, () => {
    let deps: TestDeps;
    let admin: TestClient;
    const ids: Record<string, string> = {};

    async function group(hostId: string, name: string, cron: string | null, createdAt: Date) {
      await seedScheduledGroup(deps, hostId, {
        name,
        cron,
        idsAt: createdAt,
        createdAt,
        scheduleUpdatedAt: createdAt,
      });
    }

    beforeAll(async () => {
      ({ deps, admin } = await startSignedInApp({ deps: { engine } }));
      for (const name of ["bare", "empty", "manual", "new", "lapsed", "ok"]) {
        const { host } = await seedHost(deps, { name, status: "online", createdAt: hoursAgo(72) });
        ids[name] = host.id;
        if (name !== "bare") {
          await bindCredentials(deps, host.id, { repo });
        }
      }
      await group(ids.manual as string, "files", null, hoursAgo(48));
      await group(ids.new as string, "files", "0 2 * * *", hoursAgo(1));
      await group(ids.lapsed as string, "files", "0 2 * * *", hoursAgo(48));
      await group(ids.ok as string, "etc", "30 * * * *", hoursAgo(48));
      const hostId = ids.ok as string;
      const snapshot: WireSnapshot = {
        id: "a".repeat(64),
        short_id: "aaaaaaaa",
        time: hoursAgo(1 / 6).toISOString(),
        hostname: await resticHostOf(deps, hostId),
        paths: ["/etc"],
        tags: ["etc"],
        size_bytes: 1,
        file_count: 1,
      };
      await replaceSnapshots(deps.db, hostId, { snapshots: [snapshot], refreshed_at: NOW.toISOString() });
      deps.clock.set(NOW);
    });
    afterAll(async () => {
      await deps.close();
    });

    const expected = {
      bare: "no_repository",
      empty: "no_group",
      manual: "unscheduled",
      new: "never",
      lapsed: "overdue",
      ok: "fresh",
    };

    it("says on the host list API and page why a host is unprotected, never fresh", async () => {
      const res = await admin.request("/api/hosts");
      expect(res.status).toBe(200);
      const body = (await res.json()) as { hosts: Array<{ name: string; protection: string }> };
      expect(Object.fromEntries(body.hosts.map((host) => [host.name, host.protection]))).toEqual(expected);

      const filtered = (await (await admin.request("/api/hosts?state=unprotected")).json()) as {
        hosts: Array<{ name: string }>;
      };
      expect(filtered.hosts.map((host) => host.name)).toEqual(["bare", "empty", "manual", "new"]);

      const html = await (await admin.request("/hosts")).text();
      const shown = [...html.matchAll(/data-testid="host-freshness"><a [^>]*data-state="([^"]+)">([^<]+)</g)];
      // By name: bare, empty, lapsed, manual, new, ok.
      expect(shown.map((m) => [m[1], m[2]])).toEqual([
        ["no_repository", "no repository"],
        ["no_group", "no group"],
        ["overdue", "overdue"],
        ["unscheduled", "no schedule"],
        ["never", "never backed up"],
        ["fresh", "fresh"],
      ]);
    });

    it("counts unprotected hosts by reason on the dashboard, as its API does", async () => {
      const res = await admin.json("GET", "/api/dashboard");
      const body = (await res.json()) as {
        hosts: Record<string, number>;
        groups: Record<string, number>;
        unprotected: Record<string, number>;
      };
      expect(body.hosts).toMatchObject({ total: 6, overdue: 1, unprotected: 4 });
      expect(body.groups).toEqual({ overdue: 1, due: 0, never: 1, fresh: 1, unscheduled: 1 });
      expect(body.unprotected).toEqual({ no_repository: 1, no_group: 1, unscheduled: 1, never: 1 });

      const html = await (await admin.request("/")).text();
      const line = html.match(
        /<p class="notice-error" data-testid="backup-unprotected">([\s\S]*?)<\/p>/,
      )?.[1];
      expect(
        line
          ?.replace(/<[^>]+>/g, "")
          .replace(/\s+/g, " ")
          .trim(),
      ).toBe("4 hosts not backed up: 1 no repository, 1 no group, 1 no schedule, 1 never backed up.");
      expect(line).toContain('<a href="/hosts?state=unprotected">');
      // "Unprotected" would read as deletion protection, which the page counts apart in its own words.
      const text = html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");
      expect(text).not.toMatch(/unprotected|not protected/i);
      expect(text).toMatch(
        /6 hosts with deletion protection off: whoever controls one of them can delete its backups\. 0 with deletion protection on:/,
      );
      const fleet = await (await admin.request("/hosts")).text();
      expect(fleet).toMatch(/data-testid="hosts-filter-unprotected"[^>]*>Not backed up<\/a>/);
      expect(fleet).toContain('<option value="unprotected">Not backed up</option>');
      const host = await (await admin.request(`/hosts/${ids.new}`)).text();
      expect(host).toContain("<strong>Deletion protection off.</strong>");
    });

    it("shows a scheduled group never backed up as such on the host's sources", async () => {
      const res = await admin.json("GET", `/api/hosts/${ids.new}/source-groups`);
      const body = (await res.json()) as { source_groups: Array<{ freshness: { state: string } }> };
      expect(body.source_groups.map((g) => g.freshness.state)).toEqual(["never"]);
      const html = await (await admin.request(`/hosts/${ids.new}/sources`)).text();
      expect(html).toMatch(/data-testid="freshness-files" data-state="never">never backed up</);
    });
  });
}

import { repositorySizes } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { expect, it } from "vitest";
import { applyRepoStats } from "../snapshots/repo-stats.js";
import { seedHost } from "../testing/seed.js";
import { fleetRepositoryGrowth, recordRepositorySize } from "./repository-growth.js";

const NOW = new Date("2026-11-21T12:00:00Z");
const daysAgo = (days: number, hour = 9) => new Date(Date.UTC(2026, 10, 21 - days, hour, 0, 0));

runDbSuite("repository growth", (getDb) => {
  /** What the repo.stats handler does: apply the partial report, then record the day's size. */
  async function report(hostId: string, raw: number | undefined, at: Date, total?: number) {
    const stats = await applyRepoStats(
      getDb(),
      hostId,
      {
        ...(raw === undefined ? {} : { raw_size_bytes: raw }),
        ...(total === undefined ? {} : { total_size_bytes: total }),
      },
      at,
    );
    await recordRepositorySize(getDb(), stats, at);
  }

  it("keeps one row per host and UTC day, the day's last report winning, and skips size-less rows", async () => {
    const { host } = await seedHost({ db: getDb() });
    await report(host.id, 100, daysAgo(1, 1));
    await report(host.id, 150, daysAgo(1, 23));
    await report(host.id, 170, daysAgo(0, 1), 400);
    const { host: checkedOnly } = await seedHost({ db: getDb() }, { name: "checked-only" });
    await applyRepoStats(getDb(), checkedOnly.id, { last_check_status: "ok" }, NOW);
    await recordRepositorySize(
      getDb(),
      { hostId: checkedOnly.id, rawSizeBytes: null, totalSizeBytes: null },
      NOW,
    );
    const rows = await getDb().select().from(repositorySizes);
    expect(rows.map((row) => [row.hostId, row.day, row.rawSizeBytes, row.totalSizeBytes]).sort()).toEqual(
      [
        [host.id, "2026-11-20", 150, null],
        [host.id, "2026-11-21", 170, 400],
      ].sort(),
    );
  });

  it("sums every host's latest size per day, carrying sizes from before the window and across quiet days", async () => {
    const { host: a } = await seedHost({ db: getDb() }, { name: "a" });
    const { host: b } = await seedHost({ db: getDb() }, { name: "b" });
    const { host: c } = await seedHost({ db: getDb() }, { name: "c" });
    await report(a.id, 100, daysAgo(40));
    await report(a.id, 150, daysAgo(10));
    await report(a.id, 300, daysAgo(2));
    await report(b.id, 1_000, daysAgo(5));
    await report(b.id, 1_200, daysAgo(0));
    // Shrinking (a prune) counts as much as growing.
    await report(c.id, 500, daysAgo(20));
    await report(c.id, 50, daysAgo(3));

    const growth = await fleetRepositoryGrowth(getDb(), NOW, 30);
    expect(growth.storedBytes).toBe(300 + 1_200 + 50);
    expect(growth.hostsReporting).toBe(3);
    expect(growth.days).toHaveLength(30);
    const on = (days: number) => growth.days.find((p) => p.day === daysAgo(days).toISOString().slice(0, 10));
    expect(growth.days[0]).toEqual({ day: "2026-10-23", storedBytes: 100 });
    expect(on(20)?.storedBytes).toBe(600);
    expect(on(11)?.storedBytes).toBe(600);
    expect(on(10)?.storedBytes).toBe(650);
    expect(on(5)?.storedBytes).toBe(1_650);
    expect(on(3)?.storedBytes).toBe(1_200);
    expect(on(2)?.storedBytes).toBe(1_350);
    expect(growth.days.at(-1)).toEqual({ day: "2026-11-21", storedBytes: 1_550 });
  });

  it("answers zeros for a fleet that never reported a size", async () => {
    await seedHost({ db: getDb() });
    const growth = await fleetRepositoryGrowth(getDb(), NOW, 7);
    expect(growth.storedBytes).toBe(0);
    expect(growth.hostsReporting).toBe(0);
    expect(growth.days.map((p) => p.storedBytes)).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });
});

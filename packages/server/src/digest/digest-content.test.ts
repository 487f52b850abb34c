/**
 * Issue 39.1: a digest names what needs a person (an overdue host, a failed drill) by count and
 * by name, says what changed since the previous digest, including what resolved, and stays the
 * same size however many hosts share a state.
 */
import { hosts } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { expect, it } from "vitest";
import { reportSnapshots, seedScheduledGroup } from "../testing/health-test-support.js";
import { seedHost, seedJob } from "../testing/seed.js";
import { createTestDeps } from "../testing/test-deps.js";
import { buildDigest, DIGEST_WORST } from "./digest-content.js";
import { digestText } from "./digest-text.js";

const DAY = 86_400_000;

runDbSuite("fleet digest", (getDb) => {
  it("names an overdue host and a failed drill, then says the next day that they resolved", async () => {
    const deps = await createTestDeps({ db: getDb() });
    // The test clock starts at 2026-11-21T12:00:00Z; hourly backups, never made: overdue at 14:00.
    const { host: web } = await seedScheduledGroup(deps, { cron: "0 * * * *" });
    const db = (await seedHost(deps, { name: "db" })).host;
    // Both connected: offline is its own state, counted apart.
    await deps.db.update(hosts).set({ status: "online" });
    deps.clock.advance(3 * 60 * 60 * 1000);
    await seedJob(
      deps,
      { hostId: db.id, kind: "drill", actorKind: "schedule" },
      { status: "failed", finishedAt: deps.clock.now() },
    );
    const first = await buildDigest(deps, undefined, DAY);
    expect(first.all_well).toBe(false);
    expect(first.overdue).toEqual({ count: 1, names: [web.name] });
    expect(first.drills.failed).toEqual({ count: 1, names: ["db"] });
    expect(first.since).toBeNull();
    const words = digestText(first, `${deps.config.baseUrl}/hosts`);
    expect(words.title).toBe("Fleetback: 2 things need attention (1 overdue, 1 failed drill)");
    expect(words.text).toContain(`Needs attention: 1 overdue: ${web.name}.`);
    expect(words.text).toContain("Needs attention: 1 with a failed drill: db.");
    expect(words.html).toContain("<h1");

    // Next day: web backed up, db's drill passed.
    deps.clock.advance(DAY);
    await reportSnapshots(deps, web.id, [{ time: deps.clock.now().toISOString(), tags: ["etc"] }]);
    await seedJob(
      deps,
      { hostId: db.id, kind: "drill", actorKind: "schedule" },
      {
        status: "succeeded",
        finishedAt: deps.clock.now(),
      },
    );
    const second = await buildDigest(deps, first.state, DAY);
    expect(second.since).toBe(first.generated_at);
    expect(second.overdue.count).toBe(0);
    expect(second.drills).toEqual({ passed: 1, failed: { count: 0, names: [] } });
    expect(second.all_well).toBe(true);
    const next = digestText(second, `${deps.config.baseUrl}/hosts`);
    expect(next.title).toBe("Fleetback: all well, 2 hosts backed up on time");
    expect(next.text).toContain("Nothing needs attention.");
    expect(second.changes.resolved).toEqual({ count: 2, names: ["db", web.name].sort() });
    expect(next.text).toContain(`Since the last digest: 2 resolved: ${["db", web.name].sort().join(", ")}.`);
    await deps.close();
  });

  it("stays short however many hosts share a state: counts, and the first few by name", async () => {
    const deps = await createTestDeps({ db: getDb() });
    for (let i = 0; i < 40; i++) {
      await seedHost(deps, { name: `host-${String(i).padStart(2, "0")}`, status: "offline" });
    }
    const digest = await buildDigest(deps, undefined, DAY);
    expect(digest.offline.count).toBe(40);
    expect(digest.offline.names).toHaveLength(DIGEST_WORST);
    expect(digestText(digest, "https://backup.example.org/hosts").text).toContain(
      "40 offline: host-00, host-01, host-02, host-03, host-04 and 35 more",
    );
    await deps.close();
  });
});

/**
 * Issue 39.2: the evidence report is built from what the server recorded when it happened
 * (snapshots as first listed, checks and drills as they ended), so a 30-day table matches the
 * history exactly, as data and as CSV, and forgetting snapshots or deleting a host afterwards
 * does not change it.
 */
import { evidenceDays, evidenceHosts, hosts } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import type { JobKind } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { utcDay } from "../clock.js";
import { createJob } from "../jobs/create-job.js";
import { createServerJobReports } from "../jobs/job-reports.js";
import { parseSelector } from "../labels/selector.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { seedEvidenceFleet, snapshotHistory } from "../testing/evidence-fleet.js";
import { seedHost, snapshotAt } from "../testing/seed.js";
import { createTestDeps } from "../testing/test-deps.js";
import { EVIDENCE_KEEP_DAYS, pruneEvidence, recordSnapshotEvidence } from "./evidence-record.js";
import { evidenceCsv, evidenceReport } from "./evidence-report.js";

const DAYS = 30;

runDbSuite("evidence report", (getDb) => {
  it("reports 30 days exactly as they happened, and forgetting or deleting afterwards changes nothing", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const start = deps.clock.now();
    const { web, db, dev } = await seedEvidenceFleet(deps, {
      web: ["etc", "data"],
      db: ["pg"],
      dev: ["etc"],
    });
    const reports = createServerJobReports(deps);
    const runJob = async (hostId: string, kind: JobKind, passed: boolean) => {
      const job = await createJob(deps, { hostId, kind, actorKind: "user" });
      await reports.started(hostId, { job_id: job.id, kind, started_at: deps.clock.now().toISOString() });
      await reports.finished(hostId, {
        job_id: job.id,
        status: passed ? "succeeded" : "failed",
        exit_code: passed ? 0 : 1,
      });
    };
    const list = snapshotHistory(deps);
    // web: etc daily but days 9 to 11; data daily but the last day; a check passes on day 4
    // and fails on day 19; a drill fails on day 2 and passes on day 3. db: pg on even days.
    for (let day = 0; day < DAYS; day++) {
      const tags = [...(day >= 9 && day <= 11 ? [] : ["etc"]), ...(day === DAYS - 1 ? [] : ["data"])];
      await list(web, tags);
      await list(db, day % 2 === 0 ? ["pg"] : []);
      await list(dev, ["etc"]);
      if (day === 4 || day === 19) {
        await runJob(web.id, "check", day === 4);
      }
      if (day === 2 || day === 3) {
        await runJob(web.id, "drill", day === 3);
      }
      deps.clock.advance(86_400_000);
    }
    await deps.db.delete(hosts).where(eq(hosts.id, db.id));

    const from = utcDay(start);
    const to = utcDay(new Date(start.getTime() + (DAYS - 1) * 86_400_000));
    const query = { from, to, selector: parseSelector("env=prod") };
    const report = await evidenceReport(deps.db, query);
    expect(report.days).toHaveLength(DAYS);
    expect(report.hosts.map((h) => [h.name, h.deleted])).toEqual([
      ["web", false],
      ["db", true],
    ]);
    const [webReport, dbReport] = report.hosts;
    const marks = (f: (day: number) => string) => Array.from({ length: DAYS }, (_, day) => f(day));
    expect(webReport?.groups.map((g) => g.name)).toEqual(["data", "etc"]);
    expect(webReport?.groups[1]?.days).toEqual(marks((d) => (d >= 9 && d <= 11 ? "no" : "yes")));
    expect(webReport?.groups[1]?.gaps).toEqual([
      {
        from: report.days[9],
        to: report.days[11],
        days: 3,
      },
    ]);
    expect(webReport?.groups[0]?.days).toEqual(marks((d) => (d === DAYS - 1 ? "no" : "yes")));
    expect(webReport?.check).toEqual(marks((d) => (d < 4 ? "none" : d < 19 ? "passed" : "failed")));
    expect(webReport?.drill).toEqual(marks((d) => (d < 2 ? "none" : d === 2 ? "failed" : "passed")));
    expect(dbReport?.groups.map((g) => [g.name, g.days])).toEqual([
      ["pg", marks((d) => (d % 2 === 0 ? "yes" : "no"))],
    ]);
    expect(report.totals).toEqual({ hosts: 2, group_days: 90, covered: 30 - 3 + 30 - 1 + 15, gaps: 2 + 15 });

    const csv = evidenceCsv(report);
    const lines = csv.trimEnd().split("\r\n");
    expect(lines[0]).toBe("day,host,host_id,deleted,group,snapshot,snapshots,last_check,last_drill");
    expect(lines).toHaveLength(1 + 3 * DAYS);
    expect(lines).toContain(`${report.days[10]},web,${web.id},no,etc,no,0,passed,passed`);
    expect(lines).toContain(`${report.days[19]},web,${web.id},no,data,yes,1,failed,passed`);
    expect(lines).toContain(`${report.days[0]},db,${db.id},yes,pg,yes,1,none,none`);

    // Forgetting every snapshot of web changes nothing of what was recorded.
    await replaceSnapshots(deps.db, web.id, { refreshed_at: deps.clock.now().toISOString(), snapshots: [] });
    expect(await evidenceReport(deps.db, query)).toEqual(report);
    // Only the named group; a range that is not a range names its field.
    const only = await evidenceReport(deps.db, { ...query, groups: ["etc"] });
    expect(only.hosts.map((h) => h.groups.map((g) => g.name))).toEqual([["etc"], []]);
    await expect(evidenceReport(deps.db, { ...query, from: "2026-02-30" })).rejects.toThrow(/^from: /);
    await expect(evidenceReport(deps.db, { ...query, to: "2020-01-01" })).rejects.toThrow(/^to: before from/);
  });

  it("keeps EVIDENCE_KEEP_DAYS of history: older days and gone hosts with nothing left are pruned", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const web = (await seedHost(deps, { name: "web" })).host;
    const old = (await seedHost(deps, { name: "old" })).host;
    const now = deps.clock.now();
    for (const host of [web, old]) {
      await recordSnapshotEvidence(deps.db, host.id, [snapshotAt(host.resticHost, now, "etc")], now);
    }
    await deps.db.delete(hosts).where(eq(hosts.id, old.id));
    deps.clock.advance((EVIDENCE_KEEP_DAYS - 1) * 86_400_000);
    await recordSnapshotEvidence(deps.db, web.id, [snapshotAt(web.resticHost, deps.clock.now(), "etc")], now);
    await pruneEvidence(deps.db, deps.clock.now());
    expect((await deps.db.select().from(evidenceDays)).length).toBe(3);
    deps.clock.advance(2 * 86_400_000);
    await pruneEvidence(deps.db, deps.clock.now());
    expect((await deps.db.select().from(evidenceDays)).map((row) => row.day)).toEqual([
      utcDay(new Date(now.getTime() + (EVIDENCE_KEEP_DAYS - 1) * 86_400_000)),
    ]);
    // The deleted host with nothing left goes; a live host stays known.
    expect((await deps.db.select().from(evidenceHosts)).map((row) => row.name)).toEqual(["web"]);
  });
});

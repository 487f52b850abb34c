/**
 * @module cases/digest-fleet
 * Issue 39.1: a digest of a 5,000-host fleet stays short and is made in under a second. The
 * fleet is seeded in bulk with every state a digest counts: a tenth offline, a twentieth with an
 * open failure alert, every host with one hourly group and a few never backed up (overdue). The
 * subject is building the digest (reading every host's state) and writing it as text and HTML;
 * the baseline is reading the host list alone (listFleet), the floor of any fleet-wide answer.
 * The text's size is a budget row too: counts and the first few names, whatever the fleet's size.
 *
 * PGlite always; PostgreSQL too when FLEETBACK_BENCH_DATABASE_URL names a server (a new database).
 */
import { performance } from "node:perf_hooks";
import { connect, IN_MEMORY, migrate } from "@fleetback/db";
import { buildDigest, createLogger, digestText, listFleet } from "@fleetback/server";
import { sql } from "drizzle-orm";
import { type BudgetRow, engineOf } from "../budgets.js";
import { type BenchResult, median } from "../harness.js";
import { onScratchDatabase } from "../scratch-database.js";

export const DIGEST_BUDGET_MS = 1000;
/** A digest a person reads on a phone: 4 KiB of text, whatever the fleet's size. */
export const DIGEST_TEXT_BUDGET_KIB = 4;

export interface DigestFleetReport {
  results: BenchResult[];
  budgets: BudgetRow[];
  notes: string[];
}

async function runOn(label: string, databaseUrl: string | undefined, hostCount: number, rounds: number) {
  const connection = await connect({ dataDir: IN_MEMORY, ...(databaseUrl ? { databaseUrl } : {}) });
  try {
    const db = connection.db;
    await migrate(db);
    await db.execute(sql`insert into hosts (id, name, restic_host, os, arch, agent_version, status, created_at)
      select 'h' || i, 'host-' || lpad(i::text, 5, '0'), 'host-' || i, 'linux', 'x64', '0.1.0',
             case when i % 10 = 0 then 'offline' else 'online' end, now() - interval '2 days'
        from generate_series(1, ${hostCount}) as i`);
    await db.execute(sql`insert into source_groups (id, host_id, name, includes, created_at)
      select 'g' || i, 'h' || i, 'etc', '["/etc"]'::jsonb, now() - interval '2 days'
        from generate_series(1, ${hostCount}) as i`);
    await db.execute(sql`insert into schedules (id, host_id, cron, enabled, created_at, updated_at)
      select 's' || i, 'h' || i, '0 * * * *', true, now() - interval '2 days', now() - interval '2 days'
        from generate_series(1, ${hostCount}) as i`);
    await db.execute(sql`insert into schedule_source_groups (schedule_id, source_group_id)
      select 's' || i, 'g' || i from generate_series(1, ${hostCount}) as i`);
    // Every host but each 50th backed up an hour ago: those are overdue.
    await db.execute(sql`insert into snapshot_tags (host_id, tag, snapshot_count, latest_at)
      select 'h' || i, 'etc', 1, now() - interval '1 hour'
        from generate_series(1, ${hostCount}) as i where i % 50 <> 0`);
    await db.execute(sql`insert into alerts (id, host_id, kind, dedup_key, message, created_at)
      select 'a' || i, 'h' || i, 'backup_failed', 'g' || i, 'restic exited 1', now()
        from generate_series(1, ${hostCount}) as i where i % 20 = 0`);
    const deps = {
      db,
      clock: { now: () => new Date() },
      config: { timeZone: "UTC", baseUrl: "https://backup.example.org" },
      log: createLogger("silent"),
    } as unknown as Parameters<typeof buildDigest>[0];
    const subject: number[] = [];
    const baseline: number[] = [];
    let text = "";
    let title = "";
    let counted = 0;
    for (let round = 0; round < rounds; round++) {
      let started = performance.now();
      const digest = await buildDigest(deps, undefined, 86_400_000);
      ({ text, title } = digestText(digest, "https://backup.example.org/hosts"));
      subject.push(performance.now() - started);
      counted = digest.hosts.total;
      started = performance.now();
      await listFleet(db);
      baseline.push(performance.now() - started);
    }
    if (counted !== hostCount) {
      throw new Error(`the digest counted ${counted} hosts, expected ${hostCount}`);
    }
    const ms = median(subject);
    const baseMs = median(baseline);
    const name = `digest of ${hostCount.toLocaleString("en")} hosts (${label})`;
    const baselineName = `the host list alone (${label})`;
    return {
      result: {
        name,
        baselineName,
        subjectNsPerOp: ms * 1e6,
        baselineNsPerOp: baseMs * 1e6,
        ratio: ms / baseMs,
      } satisfies BenchResult,
      budget: {
        id: "D1",
        engine: engineOf(label),
        case: name,
        measured: ms,
        unit: "ms",
        baselineName,
        baseline: baseMs,
        budget: DIGEST_BUDGET_MS,
      } satisfies BudgetRow,
      bytes: Buffer.byteLength(text),
      note: `digest (${label}): ${hostCount} hosts, ${ms.toFixed(0)} ms (median of ${rounds}), text ${Buffer.byteLength(text)} bytes, titled "${title}"`,
    };
  } finally {
    await connection.close();
  }
}

export async function runDigestFleetBench(hostCount: number): Promise<DigestFleetReport> {
  const report: DigestFleetReport = { results: [], budgets: [], notes: [] };
  const targets: Array<[string, string | undefined]> = [["PGlite", undefined]];
  if (process.env.FLEETBACK_BENCH_DATABASE_URL) {
    targets.push(["PostgreSQL", process.env.FLEETBACK_BENCH_DATABASE_URL]);
  }
  for (const [label, url] of targets) {
    const { result, budget, bytes, note } = await onScratchDatabase(url, (scratch) =>
      runOn(label, scratch, hostCount, 3),
    );
    report.results.push(result);
    report.budgets.push(budget);
    if (bytes > DIGEST_TEXT_BUDGET_KIB * 1024) {
      report.notes.push(
        `digest (${label}): its text is ${bytes} bytes, over the ${DIGEST_TEXT_BUDGET_KIB} KiB budget`,
      );
    }
    report.notes.push(note);
  }
  return report;
}

/**
 * @module health/embedded-upkeep-bench
 * Issue 40.2: a long-running embedded database stays as fast and as small as it started. One
 * host's snapshot list (200 snapshots, all new ids) and a job's log (200 lines, the job before
 * last deleted with its lines, as job retention does) are replaced ROUNDS times on PGlite in a
 * data dir of its own, twice: with the upkeep the server's ticker runs when idle (one pass every
 * UPKEEP_EVERY rounds, as the idle server's five-minute tick would between bursts of work), and
 * without it. After the first tenth of the rounds and at the end: the time of the reads a page
 * makes (the host's snapshots, newest first, and a job's log) and the data dir's size. The
 * budget rows: with upkeep, the end's figures against those after the first tenth, and a round's
 * time over the last tenth against the first. Run it at its default size or larger: the WAL grows
 * to its working size (~32 MiB) over the first hundred rounds, so a tenth of fewer than a thousand
 * is measured before the data dir has settled.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { connect, type Database, executeRows, migrate, upkeep } from "@fleetback/db";
import { replaceSnapshots } from "@fleetback/server";
import { sql } from "drizzle-orm";
import type { BudgetRow } from "../budgets.js";
import { type BenchResult, median } from "../harness.js";

const SNAPSHOTS = 200;
const LOG_LINES = 200;
const UPKEEP_EVERY = 25;
/** The end may be this much larger or slower than after the first tenth. */
export const UPKEEP_SIZE_GROWTH = 1.25;
export const UPKEEP_QUERY_GROWTH = 1.5;

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? await dirBytes(path) : (await stat(path)).size;
  }
  return total;
}

function snapshotList(round: number) {
  return Array.from({ length: SNAPSHOTS }, (_, i) => {
    const id = randomBytes(32).toString("hex");
    return {
      id,
      short_id: id.slice(0, 8),
      time: new Date(Date.UTC(2026, 0, 1) + (round * SNAPSHOTS + SNAPSHOTS - i) * 60_000).toISOString(),
      hostname: "bench-host",
      paths: ["/srv/data"],
      tags: ["data"],
      size_bytes: 1_000_000 + i,
      file_count: 5_000 + i,
    };
  });
}

/** The reads a host page and a job page make, timed as the median of a few. */
async function readTime(db: Database, jobId: string): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 15; i++) {
    const started = performance.now();
    await executeRows(
      db,
      sql`select id, time, tags from snapshots where host_id = 'h1' order by time desc limit 50`,
    );
    await executeRows(db, sql`select seq, line from job_logs where job_id = ${jobId} order by seq limit 500`);
    samples.push(performance.now() - started);
  }
  return median(samples);
}

interface Figures {
  /** ms per round (replace the list, write a log, drop the old job) over the first and last tenth. */
  firstRoundMs: number;
  lastRoundMs: number;
  earlyMs: number;
  endMs: number;
  earlyBytes: number;
  endBytes: number;
  totalMs: number;
}

async function run(rounds: number, withUpkeep: boolean): Promise<Figures> {
  const dataDir = await mkdtemp(join(tmpdir(), "fleetback-upkeep-bench-"));
  const connection = await connect({ dataDir });
  try {
    const db = connection.db;
    await migrate(db);
    await db.execute(sql`insert into hosts (id, name, restic_host, os, arch, agent_version, created_at)
      values ('h1', 'bench-host', 'bench-host', 'linux', 'x64', '0.1.0', now())`);
    const early = Math.max(1, Math.floor(rounds / 10));
    const figures: Figures = {
      firstRoundMs: 0,
      lastRoundMs: 0,
      earlyMs: 0,
      endMs: 0,
      earlyBytes: 0,
      endBytes: 0,
      totalMs: 0,
    };
    const pglite = join(dataDir, "pglite");
    const started = performance.now();
    let jobId = "";
    let tenthStarted = performance.now();
    for (let round = 1; round <= rounds; round++) {
      if (round === rounds - early + 1) {
        tenthStarted = performance.now();
      }
      await replaceSnapshots(db, "h1", {
        refreshed_at: new Date().toISOString(),
        snapshots: snapshotList(round),
      });
      jobId = `job-${round}`;
      await db.execute(sql`insert into jobs (id, host_id, kind, actor_kind, status, created_at)
        values (${jobId}, 'h1', 'backup', 'schedule', 'succeeded', now())`);
      await db.execute(sql`insert into job_logs (job_id, seq, stream, line, ts)
        select ${jobId}, i, 'stdout', 'processed ' || i || ' files, ' || repeat('x', 80), now()
          from generate_series(1, ${LOG_LINES}) i`);
      await db.execute(sql`delete from jobs where id = ${`job-${round - 2}`}`);
      if (withUpkeep && round % UPKEEP_EVERY === 0) {
        await upkeep(db, { checkpoint: true });
      }
      if (round === early) {
        figures.firstRoundMs = (performance.now() - tenthStarted) / early;
      }
      if (round === rounds) {
        figures.lastRoundMs = (performance.now() - tenthStarted) / early;
      }
      if (round === early || round === rounds) {
        const ms = await readTime(db, jobId);
        const bytes = await dirBytes(pglite);
        if (round === early) {
          figures.earlyMs = ms;
          figures.earlyBytes = bytes;
        } else {
          figures.endMs = ms;
          figures.endBytes = bytes;
        }
      }
    }
    figures.totalMs = performance.now() - started;
    if (process.env.FLEETBACK_BENCH_UPKEEP_DEBUG) {
      for (const sub of await readdir(pglite)) {
        const path = join(pglite, sub);
        const size = (await stat(path)).isDirectory() ? await dirBytes(path) : (await stat(path)).size;
        process.stdout.write(`${withUpkeep ? "kept" : "left"} ${sub} ${(size / 2 ** 20).toFixed(1)} MiB\n`);
      }
    }
    return figures;
  } finally {
    await connection.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const MIB = 2 ** 20;

export async function runEmbeddedUpkeepBench(rounds: number): Promise<{
  results: BenchResult[];
  budgets: BudgetRow[];
  notes: string[];
}> {
  const kept = await run(rounds, true);
  const left = await run(rounds, false);
  const results: BenchResult[] = [];
  const early = Math.max(1, Math.floor(rounds / 10));
  const budgets: BudgetRow[] = [
    {
      id: "U1",
      engine: "pglite",
      case: `PGlite data dir after ${rounds} list and log replacements, with upkeep (pglite)`,
      measured: kept.endBytes / MIB,
      unit: "MiB",
      baselineName: `after ${early}`,
      baseline: kept.earlyBytes / MIB,
      budget: (kept.earlyBytes / MIB) * UPKEEP_SIZE_GROWTH,
    },
    {
      id: "U2",
      engine: "pglite",
      case: `host and job page reads after ${rounds} replacements, with upkeep (pglite)`,
      measured: kept.endMs,
      unit: "ms",
      baselineName: `after ${early}`,
      baseline: kept.earlyMs,
      budget: Math.max(kept.earlyMs * UPKEEP_QUERY_GROWTH, kept.earlyMs + 1),
    },
  ];
  budgets.push({
    id: "U3",
    engine: "pglite",
    case: `one list and log replacement, the last ${early} of ${rounds}, with upkeep (pglite)`,
    measured: kept.lastRoundMs,
    unit: "ms",
    baselineName: `the first ${early}`,
    baseline: kept.firstRoundMs,
    budget: kept.firstRoundMs * UPKEEP_QUERY_GROWTH,
  });
  const notes = [
    `embedded upkeep, ${rounds} rounds of ${SNAPSHOTS} snapshots and ${LOG_LINES} log lines (pglite):`,
    `  with upkeep every ${UPKEEP_EVERY} rounds: data dir ${(kept.earlyBytes / MIB).toFixed(1)} → ${(kept.endBytes / MIB).toFixed(1)} MiB, reads ${kept.earlyMs.toFixed(2)} → ${kept.endMs.toFixed(2)} ms, a round ${kept.firstRoundMs.toFixed(1)} → ${kept.lastRoundMs.toFixed(1)} ms, ${(kept.totalMs / 1000).toFixed(1)} s in all`,
    `  without:                  data dir ${(left.earlyBytes / MIB).toFixed(1)} → ${(left.endBytes / MIB).toFixed(1)} MiB, reads ${left.earlyMs.toFixed(2)} → ${left.endMs.toFixed(2)} ms, a round ${left.firstRoundMs.toFixed(1)} → ${left.lastRoundMs.toFixed(1)} ms, ${(left.totalMs / 1000).toFixed(1)} s in all`,
  ];
  return { results, budgets, notes };
}

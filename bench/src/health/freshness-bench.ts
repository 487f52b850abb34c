/**
 * @module health/freshness-bench
 * Judging the freshness of a whole fleet's source groups (what the health ticker does every
 * minute): `groups` groups on groups/4 hosts, each on a schedule, in an embedded database seeded
 * in bulk. The subject is evaluateFreshness, one query plus the cron arithmetic; the baseline
 * reads the same groups with a plain `select`, the floor any evaluation pays. A ratio near 1 says
 * the join and the schedule math cost little beyond reading the rows. A second line puts the way
 * it is not done, one query per group for its newest snapshot, beside it for scale.
 */
import { performance } from "node:perf_hooks";
import { connect, executeRows, IN_MEMORY, migrate } from "@fleetback/db";
import { evaluateFreshness } from "@fleetback/server";
import { sql } from "drizzle-orm";
import { type BenchResult, median } from "../harness.js";

export interface FreshnessBenchReport {
  results: BenchResult[];
  notes: string[];
}

async function timeMs(fn: () => Promise<unknown>, rounds: number): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  return median(times);
}

export async function runFreshnessBench(groups: number): Promise<FreshnessBenchReport> {
  const connection = await connect({ dataDir: IN_MEMORY });
  try {
    const db = connection.db;
    await migrate(db);
    const hosts = Math.max(1, Math.ceil(groups / 4));
    // Bulk seeding in SQL: hosts, four groups each, one schedule per group (cron varies so the
    // expression cache holds several), ten snapshots per group of which the newest is tagged.
    await db.execute(sql`insert into hosts (id, name, restic_host, os, arch, agent_version, time_zone)
      select 'h' || i, 'host-' || i, 'host-' || i, 'linux', 'x64', '0.1.0',
             (array['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo'])[1 + i % 4]
      from generate_series(1, ${hosts}) as i`);
    await db.execute(sql`insert into source_groups (id, host_id, name, includes)
      select 'g' || i, 'h' || (1 + (i - 1) / 4), 'group-' || (i % 4), '["/etc"]'::jsonb
      from generate_series(1, ${groups}) as i`);
    await db.execute(sql`insert into schedules (id, host_id, cron)
      select 's' || i, 'h' || (1 + (i - 1) / 4),
             (array['0 * * * *', '30 2 * * *', '0 9 * * 1-5', '*/15 * * * *'])[1 + i % 4]
      from generate_series(1, ${groups}) as i`);
    await db.execute(sql`insert into schedule_source_groups (schedule_id, source_group_id)
      select 's' || i, 'g' || i from generate_series(1, ${groups}) as i`);
    await db.execute(sql`insert into snapshots (host_id, id, short_id, time, hostname, tags)
      select 'h' || (1 + (i - 1) / 4), md5(i::text || '-' || n), left(md5(i::text || '-' || n), 8),
             now() - (n || ' hours')::interval, 'host', jsonb_build_array('group-' || (i % 4))
      from generate_series(1, ${groups}) as i, generate_series(0, 9) as n`);
    await db.execute(sql`insert into snapshot_tags (host_id, tag, latest_at, snapshot_count)
      select s.host_id, t.tag, max(s.time), count(*)::int
      from snapshots s cross join lateral jsonb_array_elements_text(s.tags) as t(tag)
      group by s.host_id, t.tag`);
    // No ANALYZE: the embedded database has no autovacuum, so a real one often has no statistics.

    const now = new Date();
    const rounds = 7;
    let judged = 0;
    const subjectMs = await timeMs(async () => {
      judged = (await evaluateFreshness(db, now, { defaultTimeZone: "UTC" })).length;
    }, rounds);
    if (judged !== groups) {
      throw new Error(`freshness judged ${judged} groups, expected ${groups}`);
    }
    const baselineMs = await timeMs(
      () => executeRows(db, sql`select g.id, g.name, g.host_id, g.created_at from source_groups g`),
      rounds,
    );
    // One query per group, on a sample, scaled to the fleet: how this is not done.
    const sample = Math.min(groups, 500);
    const perGroupMs = await timeMs(async () => {
      for (let i = 1; i <= sample; i++) {
        await executeRows(
          db,
          sql`select max(time) as latest from snapshots
              where host_id = ${`h${1 + Math.floor((i - 1) / 4)}`} and tags ? ${`group-${i % 4}`}`,
        );
      }
    }, 1);
    return {
      results: [
        {
          name: `freshness of ${groups} groups (one query + cron)`,
          baselineName: `select of the same ${groups} groups`,
          subjectNsPerOp: subjectMs * 1e6,
          baselineNsPerOp: baselineMs * 1e6,
          ratio: subjectMs / baselineMs,
        },
      ],
      notes: [
        `freshness: ${groups} groups on ${hosts} hosts judged in ${subjectMs.toFixed(1)} ms ` +
          `(${((subjectMs * 1000) / groups).toFixed(1)} µs per group); one query per group instead would take about ` +
          `${((perGroupMs * groups) / sample).toFixed(0)} ms (measured on ${sample} groups).`,
      ],
    };
  } finally {
    await connection.close();
  }
}

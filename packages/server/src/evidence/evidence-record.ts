/**
 * @module evidence/evidence-record
 * Writes the audit evidence (issue 39.2) when the server sees it happen: the snapshots a host's
 * list adds (per group tag and UTC day of the snapshot), and every check and drill that ends
 * (per UTC day it ended, passed or not). Each write happens in the transaction that stored what
 * it records, so a report never says more or less than the server stored. Rows are only ever
 * added to or counted up, never rewritten from a later list: a forget or a deleted host leaves
 * the past as it was. Kept EVIDENCE_KEEP_DAYS, pruned by the evidence ticker.
 */
import { type Database, executeRows } from "@fleetback/db";
import type { Snapshot as WireSnapshot } from "@fleetback/protocol";
import { sql } from "drizzle-orm";
import { utcDay } from "../clock.js";

/** A year and a quarter: "every day last quarter" asked in the next year still answers. */
export const EVIDENCE_KEEP_DAYS = 460;
export const EVIDENCE_PRUNE_PERIOD_MS = 60 * 60 * 1000;

/** Keeps the host's name and labels for reports after it is gone; first_day only moves earlier. */
async function rememberHosts(
  db: Database,
  hostIds: readonly string[],
  day: string,
  now: Date,
): Promise<void> {
  await db.execute(sql`
    insert into evidence_hosts (host_id, name, labels, first_day, updated_at)
    select id, name, labels, ${day}::date, ${now.toISOString()}::timestamptz
      from hosts where id in (${sql.join(
        hostIds.map((id) => sql`${id}`),
        sql`, `,
      )})
    on conflict (host_id) do update
      set name = excluded.name, labels = excluded.labels,
          first_day = least(evidence_hosts.first_day, excluded.first_day),
          updated_at = excluded.updated_at`);
}

/** Records the snapshots a list added to what the server had (own snapshots only). */
export async function recordSnapshotEvidence(
  db: Database,
  hostId: string,
  added: readonly WireSnapshot[],
  now: Date,
): Promise<void> {
  const byKey = new Map<string, { day: string; subject: string; runs: number; last_at: string }>();
  for (const snapshot of added) {
    const at = new Date(snapshot.time);
    if (Number.isNaN(at.getTime())) {
      continue;
    }
    const day = utcDay(at);
    for (const tag of new Set(snapshot.tags ?? [])) {
      const key = `${day}\u0000${tag}`;
      const entry = byKey.get(key);
      if (entry) {
        entry.runs += 1;
        entry.last_at = [entry.last_at, at.toISOString()].sort()[1] as string;
      } else {
        byKey.set(key, { day, subject: tag, runs: 1, last_at: at.toISOString() });
      }
    }
  }
  if (byKey.size === 0) {
    return;
  }
  const rows = [...byKey.values()];
  const firstDay = [utcDay(now), ...rows.map((row) => row.day)].sort()[0] as string;
  await rememberHosts(db, [hostId], firstDay, now);
  await db.execute(sql`
    insert into evidence_days (host_id, day, kind, subject, runs, passed, last_at, last_passed)
    select ${hostId}, x.day, 'snapshot', x.subject, x.runs, x.runs, x.last_at, true
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        as x(day date, subject text, runs integer, last_at timestamptz)
    on conflict (host_id, day, kind, subject) do update
      set runs = evidence_days.runs + excluded.runs,
          passed = evidence_days.passed + excluded.passed,
          last_at = greatest(evidence_days.last_at, excluded.last_at),
          last_passed = true`);
}

/**
 * Records the checks and drills among `jobIds` that ended passed (succeeded) or not (failed);
 * a cancelled or lost one says nothing about the repository. A mirror's check is the mirror's.
 */
export async function recordJobEvidence(db: Database, jobIds: readonly string[], now: Date): Promise<void> {
  if (jobIds.length === 0) {
    return;
  }
  const ids = sql.join(
    jobIds.map((id) => sql`${id}`),
    sql`, `,
  );
  const ended = sql`
    select host_id, (finished_at at time zone 'UTC')::date as day, kind,
           count(*)::int as runs,
           count(*) filter (where status = 'succeeded')::int as passed,
           max(finished_at) as last_at,
           (array_agg(status = 'succeeded' order by finished_at desc))[1] as last_passed
      from jobs
     where id in (${ids}) and kind in ('check', 'drill') and status in ('succeeded', 'failed')
       and finished_at is not null and coalesce(params->>'on_mirror', 'false') <> 'true'
     group by 1, 2, 3`;
  const hostIds = await executeRows<{ host_id: string }>(
    db,
    sql`select distinct host_id from (${ended}) as e`,
  );
  if (hostIds.length === 0) {
    return;
  }
  await rememberHosts(
    db,
    hostIds.map((row) => row.host_id),
    utcDay(now),
    now,
  );
  await db.execute(sql`
    insert into evidence_days (host_id, day, kind, subject, runs, passed, last_at, last_passed)
    select host_id, day, kind, '', runs, passed, last_at, last_passed from (${ended}) as e
    on conflict (host_id, day, kind, subject) do update
      set runs = evidence_days.runs + excluded.runs,
          passed = evidence_days.passed + excluded.passed,
          last_passed = case when excluded.last_at >= evidence_days.last_at
                             then excluded.last_passed else evidence_days.last_passed end,
          last_at = greatest(evidence_days.last_at, excluded.last_at)`);
}

/** Drops days older than the keep window, and hosts that are gone with nothing left recorded. */
export async function pruneEvidence(db: Database, now: Date): Promise<void> {
  const cutoff = utcDay(new Date(now.getTime() - EVIDENCE_KEEP_DAYS * 86_400_000));
  await db.execute(sql`delete from evidence_days where day < ${cutoff}::date`);
  await db.execute(sql`
    delete from evidence_hosts h
     where not exists (select 1 from hosts where hosts.id = h.host_id)
       and not exists (select 1 from evidence_days d where d.host_id = h.host_id)`);
}

/**
 * @module cases/catalogue-fleet
 * Issue 38.4: the fleet's file catalogue at 200 hosts, each with 30 snapshots of 100,000 files of
 * which 1 % change per snapshot. One host's catalogue is built through the server's own apply path
 * (a full listing in parts, then 29 deltas of 1,000 changes), then copied to the other hosts in
 * bulk, with a planted `id_rsa` on every twentieth. Rows: the catalogue's size per host against
 * one row per snapshot × file (what a catalogue that does not fold would hold); the first page
 * of a name search across the fleet (`*.conf`, 1,000 versions a host) and every result of a rare
 * name (`id_rsa`) against the same searches on one host; a path's version history against a
 * rare-name search on one host.
 *
 * PGlite in a data dir of its own (the fleet does not fit WebAssembly's memory); PostgreSQL too
 * when FLEETBACK_BENCH_DATABASE_URL names a server (a new database there).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { connect, type Database, executeRows, migrate } from "@fleetback/db";
import type { CatalogEntry } from "@fleetback/protocol";
import {
  applyCatalogPart,
  fileHistory,
  lineageKey,
  parseCatalogQuery,
  searchCatalogue,
} from "@fleetback/server";
import { sql } from "drizzle-orm";
import { type BudgetRow, engineOf } from "../budgets.js";
import { type BenchResult, median } from "../harness.js";
import { onScratchDatabase } from "../scratch-database.js";

const FILES = 100_000;
const SNAPSHOTS = 30;
const CHANGED = FILES / 100;
const PART = 10_000;
export const FIRST_RESULTS_BUDGET_MS = 2000;
export const ALL_RESULTS_BUDGET_MS = 10_000;
export const HISTORY_BUDGET_MS = 500;
/** The catalogue must be at least this many times smaller than one row per snapshot × file. */
export const FOLD_FACTOR = 10;

const T0 = Date.UTC(2026, 9, 1);
const timeOf = (snapshot: number) => new Date(T0 + snapshot * 3_600_000).toISOString();
const idOf = (snapshot: number) => snapshot.toString(16).padStart(64, "c");

function pathOf(file: number): string {
  const dir = `/srv/data/d${String(file % 1000).padStart(3, "0")}`;
  return file % 100 === 0 ? `${dir}/app-${file}.conf` : `${dir}/f${file}.dat`;
}

/** File `file` as written for snapshot `snapshot`: snapshot s rewrites the files of window s − 1. */
function entryOf(file: number, snapshot: number): CatalogEntry {
  return { path: pathOf(file), type: "file", size: 4096 + snapshot, mtime: timeOf(snapshot) };
}

async function timed<T>(work: () => Promise<T>, rounds = 5): Promise<{ ms: number; value: T }> {
  const samples: number[] = [];
  let value: T | undefined;
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    value = await work();
    samples.push(performance.now() - started);
  }
  return { ms: median(samples), value: value as T };
}

async function seedFirstHost(db: Database): Promise<number[]> {
  await db.execute(sql`insert into hosts (id, name, restic_host, os, arch, agent_version, created_at)
    select 'h' || i, 'host-' || lpad(i::text, 4, '0'), 'host-' || i, 'linux', 'x64', '0.1.0', now()
      from generate_series(1, 1) i`);
  await db.execute(
    sql`insert into source_groups (id, host_id, name, includes) values ('g1', 'h1', 'data', '["/srv"]')`,
  );
  const parts = Math.ceil(FILES / PART);
  for (let part = 0; part < parts; part++) {
    const changed = Array.from({ length: PART }, (_, i) => entryOf(part * PART + i, 0));
    await applyCatalogPart(db, "h1", {
      snapshot_id: idOf(0),
      tag: "data",
      time: timeOf(0),
      base_snapshot_id: null,
      part,
      parts,
      changed,
      removed: [],
    });
  }
  const applyMs: number[] = [];
  for (let snapshot = 1; snapshot < SNAPSHOTS; snapshot++) {
    const changed = Array.from({ length: CHANGED }, (_, i) =>
      entryOf((snapshot - 1) * CHANGED + i, snapshot),
    );
    const started = performance.now();
    const answer = await applyCatalogPart(db, "h1", {
      snapshot_id: idOf(snapshot),
      tag: "data",
      time: timeOf(snapshot),
      base_snapshot_id: idOf(snapshot - 1),
      part: 0,
      parts: 1,
      changed,
      removed: [],
    });
    applyMs.push(performance.now() - started);
    if (answer?.status !== "applied") {
      throw new Error(`delta ${snapshot} was answered ${JSON.stringify(answer)}`);
    }
  }
  return applyMs;
}

/** Copies host 1's catalogue and snapshot list to hosts 2…`hosts`. */
async function copyFleet(db: Database, hosts: number): Promise<void> {
  await db.execute(sql`insert into hosts (id, name, restic_host, os, arch, agent_version, created_at)
    select 'h' || i, 'host-' || lpad(i::text, 4, '0'), 'host-' || i, 'linux', 'x64', '0.1.0', now()
      from generate_series(2, ${hosts}) i`);
  await db.execute(sql`insert into source_groups (id, host_id, name, includes)
    select 'g' || i, 'h' || i, 'data', '["/srv"]' from generate_series(2, ${hosts}) i`);
  await db.execute(sql`insert into snapshots (host_id, id, short_id, time, hostname, paths, tags, size_bytes, file_count)
    select 'h' || h, lpad(to_hex(s), 64, 'c'), left(lpad(to_hex(s), 64, 'c'), 8),
           ${timeOf(0)}::timestamptz + s * interval '1 hour', 'host-' || h, '["/srv"]', '["data"]', 1, ${FILES}
      from generate_series(2, ${hosts}) h, generate_series(0, ${SNAPSHOTS - 1}) s`);
  const first = lineageKey("h1", "data").toString();
  for (let host = 2; host <= hosts; host++) {
    const lineage = lineageKey(`h${host}`, "data").toString();
    await db.execute(sql`insert into catalog_lineages (id, host_id, tag, snapshot_id, snapshot_at)
      select ${lineage}::bigint, ${`h${host}`}, tag, snapshot_id, snapshot_at from catalog_lineages
       where id = ${first}::bigint`);
    await db.execute(sql`insert into catalog_dirs (lineage_id, id, path)
      select ${lineage}::bigint, id, path from catalog_dirs where lineage_id = ${first}::bigint`);
    await db.execute(sql`insert into file_versions (lineage_id, dir_id, name, type, size, mtime, from_at, until_at)
      select ${lineage}::bigint, dir_id, name, type, size, mtime, from_at, until_at
        from file_versions where lineage_id = ${first}::bigint`);
  }
  // A key planted on every twentieth host, rotated once half-way.
  for (let host = 20; host <= hosts; host += 20) {
    const hostId = `h${host}`;
    const time = (snapshot: number) => timeOf(snapshot);
    await applyCatalogPart(db, hostId, {
      snapshot_id: idOf(SNAPSHOTS),
      tag: "data",
      time: time(SNAPSHOTS),
      base_snapshot_id: idOf(SNAPSHOTS - 1),
      part: 0,
      parts: 1,
      changed: [{ path: `/home/u${host}/.ssh/id_rsa`, type: "file", size: 1679, mtime: time(1) }],
      removed: [],
    });
    await db.execute(sql`insert into snapshots (host_id, id, short_id, time, hostname, paths, tags, size_bytes, file_count)
      values (${hostId}, ${idOf(SNAPSHOTS)}, ${idOf(SNAPSHOTS).slice(0, 8)}, ${time(SNAPSHOTS)}::timestamptz,
              ${`host-${host}`}, '["/srv"]', '["data"]', 1, ${FILES})`);
  }
  await db.execute(sql`analyze`);
}

export async function runCatalogueFleetOn(label: string, databaseUrl: string | undefined, hosts: number) {
  const dataDir = await mkdtemp(join(tmpdir(), "fleetback-catalogue-bench-"));
  const connection = await connect({ dataDir, ...(databaseUrl ? { databaseUrl } : {}) });
  try {
    const db = connection.db;
    await migrate(db);
    const seedStarted = performance.now();
    const applyMs = await seedFirstHost(db);
    await db.execute(sql`insert into snapshots (host_id, id, short_id, time, hostname, paths, tags, size_bytes, file_count)
      select 'h1', lpad(to_hex(s), 64, 'c'), left(lpad(to_hex(s), 64, 'c'), 8),
             ${timeOf(0)}::timestamptz + s * interval '1 hour', 'host-1', '["/srv"]', '["data"]', 1, ${FILES}
        from generate_series(0, ${SNAPSHOTS - 1}) s`);
    await copyFleet(db, hosts);
    const seedMs = performance.now() - seedStarted;

    const [size] = await executeRows<{ bytes: string; rows: string }>(
      db,
      sql`select (pg_total_relation_size('file_versions') + pg_total_relation_size('catalog_dirs'))::text as bytes,
                 (select count(*) from file_versions)::text as rows`,
    );
    const bytesPerHost = Number(size?.bytes ?? 0) / hosts;
    const rowsPerHost = Number(size?.rows ?? 0) / hosts;
    const naivePerHost = (bytesPerHost / rowsPerHost) * FILES * SNAPSHOTS;

    const everywhere = {};
    const oneHost = { hostIds: ["h7"] };
    const conf = parseCatalogQuery("*.conf");
    const key = parseCatalogQuery("id_rsa");
    const first = await timed(() => searchCatalogue(db, conf, everywhere, { limit: 100 }));
    const firstOne = await timed(() => searchCatalogue(db, conf, oneHost, { limit: 100 }));
    const all = await timed(() => searchCatalogue(db, key, everywhere, { limit: 500 }));
    const allOne = await timed(() => searchCatalogue(db, key, { hostIds: ["h20"] }, { limit: 500 }));
    const nowhere = await timed(() => searchCatalogue(db, parseCatalogQuery("no-such-name"), everywhere));
    const history = await timed(() => fileHistory(db, "h7", pathOf(CHANGED * 3)));
    const expectedKeys = Math.floor(hosts / 20);
    if (
      all.value.hits.length !== expectedKeys ||
      first.value.hits.length !== 100 ||
      history.value.length < 2
    ) {
      throw new Error(
        `unexpected answers: ${all.value.hits.length} keys (expected ${expectedKeys}), ${first.value.hits.length} first hits, ${history.value.length} versions`,
      );
    }
    const engine = engineOf(label);
    const MIB = 2 ** 20;
    const budgets: BudgetRow[] = [
      {
        id: "S1",
        engine,
        case: `catalogue per host, ${FILES.toLocaleString("en")} files × ${SNAPSHOTS} snapshots, 1 % changing (${label})`,
        measured: bytesPerHost / MIB,
        unit: "MiB",
        baselineName: "a row per snapshot × file",
        baseline: naivePerHost / MIB,
        budget: naivePerHost / MIB / FOLD_FACTOR,
      },
      {
        id: "S2",
        engine,
        case: `first 100 results of *.conf across ${hosts} hosts (${label})`,
        measured: first.ms,
        unit: "ms",
        baselineName: "the same on one host",
        baseline: firstOne.ms,
        budget: FIRST_RESULTS_BUDGET_MS,
      },
      {
        id: "S3",
        engine,
        case: `every result of id_rsa across ${hosts} hosts (${label})`,
        measured: all.ms,
        unit: "ms",
        baselineName: "the same on one host",
        baseline: allOne.ms,
        budget: ALL_RESULTS_BUDGET_MS,
      },
      {
        id: "S4",
        engine,
        case: `one path's version history (${label})`,
        measured: history.ms,
        unit: "ms",
        baselineName: "id_rsa on one host",
        baseline: allOne.ms,
        budget: HISTORY_BUDGET_MS,
      },
    ];
    const results: BenchResult[] = [];
    const notes = [
      `catalogue (${label}): ${hosts} hosts seeded in ${(seedMs / 1000).toFixed(1)} s; ${Math.round(rowsPerHost).toLocaleString("en")} version rows a host (${FILES.toLocaleString("en")} files + ${(SNAPSHOTS - 1) * CHANGED} changes), ${(bytesPerHost / MIB).toFixed(1)} MiB a host with indexes; a delta of ${CHANGED} changes applied in ${median(applyMs).toFixed(0)} ms (median of ${applyMs.length}); a name that exists nowhere answered in ${nowhere.ms.toFixed(1)} ms.`,
    ];
    return { budgets, results, notes };
  } finally {
    await connection.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export async function runCatalogueFleetBench(hosts: number) {
  const runs = [await runCatalogueFleetOn("PGlite", undefined, hosts)];
  const url = process.env.FLEETBACK_BENCH_DATABASE_URL;
  if (url) {
    runs.push(await onScratchDatabase(url, (scratch) => runCatalogueFleetOn("PostgreSQL", scratch, hosts)));
  }
  return {
    results: runs.flatMap((run) => run.results),
    budgets: runs.flatMap((run) => run.budgets),
    notes: runs.flatMap((run) => run.notes),
  };
}

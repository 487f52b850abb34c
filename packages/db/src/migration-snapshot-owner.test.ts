/**
 * Migration 0015 on a database that already holds hosts and snapshots (issue 31): every host gets
 * a unique restic_host (the name, or the name and the id's tail when another host has it), its
 * snapshot hostnames, and its snapshots split into its own and other machines'; the counts and the
 * per-tag projection then cover its own snapshots only.
 */
import { copyFile, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { executeRows } from "./database.js";
import { MIGRATIONS_DIR, migrate } from "./migrate.js";
import { runDbSuite } from "./testing/db-suite.js";

const OWNER_MIGRATION = "0015_snapshot_owner.sql";
let dir = "";

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "fleetback-migrations-"));
  for (const file of await readdir(MIGRATIONS_DIR)) {
    if (file < OWNER_MIGRATION) {
      await copyFile(join(fileURLToPath(MIGRATIONS_DIR), file), join(dir, file));
    }
  }
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

runDbSuite(
  "migration 0015 snapshot owner",
  (getDb) => {
    it("names each host uniquely and splits its snapshots into its own and other machines'", async () => {
      const db = getDb();
      await migrate(db, { migrationsDir: dir });
      await executeRows(
        db,
        `insert into hosts (id, name, reported_hostname, os, arch, agent_version, snapshot_count) values
         ('01HOSTAAAAAAAAAAAAAAAAAAAA', 'web', 'web-renamed', 'linux', 'x64', '1', 3),
         ('01HOSTBBBBBBBBBBBBBBBBBBBB', 'web', null, 'linux', 'x64', '1', 0)`,
      );
      await executeRows(
        db,
        `insert into snapshots (host_id, id, short_id, time, hostname, tags) values
         ('01HOSTAAAAAAAAAAAAAAAAAAAA', 'aa01', 'aa01', '2026-01-01T00:00:00Z', 'web', '["default"]'),
         ('01HOSTAAAAAAAAAAAAAAAAAAAA', 'aa02', 'aa02', '2026-01-02T00:00:00Z', 'web-renamed', '["default"]'),
         ('01HOSTAAAAAAAAAAAAAAAAAAAA', 'aa03', 'aa03', '2026-01-03T00:00:00Z', 'alpha', '["default", "etc"]')`,
      );
      await executeRows(
        db,
        `insert into snapshot_tags (host_id, tag, latest_at, snapshot_count) values
         ('01HOSTAAAAAAAAAAAAAAAAAAAA', 'default', '2026-01-03T00:00:00Z', 3),
         ('01HOSTAAAAAAAAAAAAAAAAAAAA', 'etc', '2026-01-03T00:00:00Z', 1)`,
      );
      await copyFile(join(fileURLToPath(MIGRATIONS_DIR), OWNER_MIGRATION), join(dir, OWNER_MIGRATION));
      await migrate(db, { migrationsDir: dir });

      const hosts = await executeRows<{
        id: string;
        restic_host: string;
        snapshot_hostnames: string[];
        snapshot_count: number;
        other_snapshot_count: number;
      }>(
        db,
        "select id, restic_host, snapshot_hostnames, snapshot_count, other_snapshot_count from hosts order by id",
      );
      expect(hosts.map((h) => ({ ...h, snapshot_hostnames: [...h.snapshot_hostnames].sort() }))).toEqual([
        {
          id: "01HOSTAAAAAAAAAAAAAAAAAAAA",
          restic_host: "web",
          snapshot_hostnames: ["web", "web-renamed"],
          snapshot_count: 2,
          other_snapshot_count: 1,
        },
        {
          id: "01HOSTBBBBBBBBBBBBBBBBBBBB",
          restic_host: "web-bbbbbb",
          snapshot_hostnames: ["web", "web-bbbbbb"],
          snapshot_count: 0,
          other_snapshot_count: 0,
        },
      ]);
      const own = await executeRows<{ id: string; is_own: boolean }>(
        db,
        "select id, is_own from snapshots order by id",
      );
      expect(own).toEqual([
        { id: "aa01", is_own: true },
        { id: "aa02", is_own: true },
        { id: "aa03", is_own: false },
      ]);
      const tags = await executeRows<{ tag: string; latest_at: Date; snapshot_count: number }>(
        db,
        "select tag, latest_at, snapshot_count from snapshot_tags order by tag",
      );
      expect(tags.map((t) => ({ ...t, latest_at: new Date(t.latest_at).toISOString() }))).toEqual([
        { tag: "default", latest_at: "2026-01-02T00:00:00.000Z", snapshot_count: 2 },
      ]);
    });
  },
  { migrated: false },
);

/**
 * @module testing/recorded-stats
 * The `restic stats --json --mode raw-data` run a backup and a prune make for repo.stats: its argv
 * as the runner sees it, and what its recording (testdata/restic `stats-raw`) holds and makes the
 * job report. The sizes differ per recording run, so tests read them rather than write them out.
 */
import type { RepoStats } from "@fleetback/protocol";
import { expect } from "vitest";
import { type FixtureVersion, fixture } from "./job-run.js";

export const RAW_DATA_STATS_ARGS = [
  "--cache-dir",
  "/state/cache",
  "--json",
  "stats",
  "--no-lock",
  "--mode",
  "raw-data",
];

export interface RawDataStats {
  total_size: number;
  total_uncompressed_size: number;
  compression_ratio: number;
}

/** The recorded stats; a recording that stored nothing fails the test that reads it. */
export function recordedStats(version: FixtureVersion = "0.18.0"): RawDataStats {
  const raw = JSON.parse(fixture(version, "stats-raw").stdout) as RawDataStats;
  expect(raw.total_size).toBeGreaterThan(0);
  return raw;
}

/** The repo.stats the recording makes a job report: 0.14 prints no compression fields. */
export function recordedRepoStats(version: FixtureVersion = "0.18.0"): RepoStats {
  const raw = recordedStats(version);
  return version === "0.14.0"
    ? { raw_size_bytes: raw.total_size, snapshot_count: 6 }
    : {
        raw_size_bytes: raw.total_size,
        total_size_bytes: raw.total_uncompressed_size,
        snapshot_count: 6,
        compression_ratio: raw.compression_ratio,
      };
}

import { describe, expect, it } from "vitest";
import { fixture } from "../testing/job-run.js";
import { parseRawDataStats } from "./raw-data-stats.js";

/** The recorded `stats --json --mode raw-data` (6 snapshots; sizes differ per recording run). */
const recorded = (version: "0.14.0" | "0.18.0") =>
  JSON.parse(fixture(version, "stats-raw").stdout) as Record<string, number>;

describe("parseRawDataStats on recorded output", () => {
  it("0.18: stored size, uncompressed size, restic's ratio and the snapshot count", () => {
    const raw = recorded("0.18.0");
    expect(raw.total_size).toBeGreaterThan(0);
    expect(raw.total_uncompressed_size).toBeGreaterThan(raw.total_size ?? 0);
    expect(parseRawDataStats(fixture("0.18.0", "stats-raw").stdout, { compressionFields: true })).toEqual({
      raw_size_bytes: raw.total_size,
      total_size_bytes: raw.total_uncompressed_size,
      compression_ratio: raw.compression_ratio,
      snapshot_count: 6,
    });
  });

  it("0.14: stored size and snapshot count; its total_file_count 0 is not a file count", () => {
    const stats = parseRawDataStats(fixture("0.14.0", "stats-raw").stdout, { compressionFields: false });
    expect(recorded("0.14.0").total_file_count).toBe(0);
    expect(recorded("0.14.0").total_size).toBeGreaterThan(0);
    expect(stats).toEqual({ raw_size_bytes: recorded("0.14.0").total_size, snapshot_count: 6 });
    expect(stats).not.toHaveProperty("total_file_count");
  });

  it("refuses output that is not a stats object", () => {
    expect(
      parseRawDataStats(fixture("0.14.0", "prune").stdout, { compressionFields: false }),
    ).toBeUndefined();
    expect(parseRawDataStats("[]", { compressionFields: true })).toBeUndefined();
  });
});

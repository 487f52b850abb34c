import { describe, expect, it } from "vitest";
import { fixture } from "../testing/job-run.js";
import { resticFixturesDir } from "../testing/tools.js";
import { parseRawDataStats } from "./raw-data-stats.js";

const fixtures = resticFixturesDir();

describe.skipIf(fixtures === undefined)("parseRawDataStats on recorded output", () => {
  it("0.18: stored size, uncompressed size, restic's ratio and the snapshot count", () => {
    expect(parseRawDataStats(fixture("0.18.0", "stats-raw").stdout, { compressionFields: true })).toEqual({
      raw_size_bytes: 75270,
      total_size_bytes: 84184,
      compression_ratio: 1.1184269961472033,
      snapshot_count: 6,
    });
  });

  it("0.14: stored size and snapshot count; its total_file_count 0 is not a file count", () => {
    const stats = parseRawDataStats(fixture("0.14.0", "stats-raw").stdout, { compressionFields: false });
    expect(stats).toEqual({ raw_size_bytes: 75024, snapshot_count: 6 });
    expect(stats).not.toHaveProperty("total_file_count");
  });

  it("refuses output that is not a stats object", () => {
    expect(
      parseRawDataStats(fixture("0.14.0", "prune").stdout, { compressionFields: false }),
    ).toBeUndefined();
    expect(parseRawDataStats("[]", { compressionFields: true })).toBeUndefined();
  });
});

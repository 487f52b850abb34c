import type { CommandRunDiff } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import {
  argsAfterSubcommand,
  fixture,
  linesOf,
  recordedScenario,
  resticCalls,
  runJobForTest,
} from "../testing/job-run.js";
import { createDiffJob } from "./diff-job.js";

const diffCommand = (snapshot_a: string, snapshot_b: string): CommandRunDiff => ({
  job_id: "01JD0000000000000000000002",
  kind: "diff",
  requires_admin_creds: false,
  diff: { snapshot_a, snapshot_b },
});

describe.each(["0.14.0", "0.18.0"] as const)("diff on restic %s", (version) => {
  // The recording compares S1 with S4: one file added, one removed, two changed.
  const { S1, S4 } = recordedScenario(version).snapshots;

  it("streams every JSON line as a log line and sums up the statistics", async () => {
    const recording = fixture(version, "diff");
    const ran = await runJobForTest(createDiffJob, diffCommand(S1.id, S4.id), {
      version,
      replay: () => recording,
    });
    expect(ran.outcome).toMatchObject({ status: "succeeded", exit_code: 0 });
    const lines = recording.stdout.trimEnd().split("\n");
    expect(linesOf(ran, "stdout")).toEqual(lines);
    const [call] = resticCalls(ran, "diff");
    expect(call?.args).toContain("--json");
    expect(argsAfterSubcommand(call?.args ?? [])).toEqual([S1.id, S4.id]);
    // Byte counts include tree blobs, whose size differs from one recording run to the next.
    const statistics = JSON.parse(lines.at(-1) ?? "") as {
      added: { bytes: number };
      removed: { bytes: number };
    };
    expect(statistics.added.bytes).toBeGreaterThan(0);
    expect(ran.outcome.summary).toMatchObject({
      changed_files: 2,
      added: { files: 1, bytes: statistics.added.bytes },
      removed: { files: 1, bytes: statistics.removed.bytes },
      changes: { added: 1, removed: 1, modified: 2, other: 0 },
    });
  });

  it("fails with restic's message for an unknown snapshot", async () => {
    const ran = await runJobForTest(createDiffJob, diffCommand(S1.short_id, "ffffffff"), {
      version,
      replay: () => fixture(version, "diff-short-latest"),
    });
    expect(ran.outcome).toMatchObject({
      status: "failed",
      exit_code: 1,
      error: 'Fatal: no matching ID found for prefix "latest"',
    });
    expect(ran.outcome.summary).toBeUndefined();
  });
});

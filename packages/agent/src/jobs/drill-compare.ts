/**
 * @module jobs/drill-compare
 * After `restic restore --verify` (which checks content against the snapshot's blob hashes), each
 * sampled file is compared with what the listing recorded: it must be a regular file of the
 * recorded size at `<scratch>/<original path>`, where restic writes it.
 */
import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { DRILL_MISMATCHES_LISTED, type DrillMismatch } from "@fleetback/protocol";
import type { SampledFile } from "./drill-sample.js";

export interface DrillComparison {
  /** Files found as recorded. */
  matched: number;
  bytesMatched: number;
  mismatchCount: number;
  /** The first DRILL_MISMATCHES_LISTED mismatches. */
  mismatches: DrillMismatch[];
}

async function restoredSize(path: string): Promise<number | null> {
  try {
    const stat = await lstat(path);
    return stat.isFile() ? stat.size : null;
  } catch {
    return null;
  }
}

export async function compareRestored(
  scratch: string,
  sample: readonly SampledFile[],
): Promise<DrillComparison> {
  const result: DrillComparison = { matched: 0, bytesMatched: 0, mismatchCount: 0, mismatches: [] };
  for (const file of sample) {
    const size = await restoredSize(join(scratch, file.path));
    if (size === file.size) {
      result.matched += 1;
      result.bytesMatched += size;
      continue;
    }
    result.mismatchCount += 1;
    if (result.mismatches.length < DRILL_MISMATCHES_LISTED) {
      result.mismatches.push({ path: file.path, expected_size: file.size, restored_size: size });
    }
  }
  return result;
}

/** One sentence naming the first mismatch, for `job.finished.error`. */
export function mismatchError(comparison: DrillComparison, sampled: number): string {
  const first = comparison.mismatches[0];
  const detail =
    first === undefined
      ? ""
      : first.restored_size === null
        ? `: ${first.path} was not restored`
        : `: ${first.path} has ${first.restored_size} bytes, the snapshot records ${first.expected_size}`;
  return `${comparison.mismatchCount} of ${sampled} sampled files differ from the snapshot${detail}`;
}

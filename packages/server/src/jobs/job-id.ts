/**
 * @module jobs/job-id
 * Job ids are ULIDs (the wire's `job_id` is one), so they sort by creation time; the time part
 * comes from the injected clock and ids made within one millisecond still sort in creation order.
 */
import { monotonicFactory, type ULIDFactory } from "ulidx";

let factory: ULIDFactory | undefined;

export function newJobId(now: Date): string {
  factory ??= monotonicFactory();
  return factory(now.getTime());
}

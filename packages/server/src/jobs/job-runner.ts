/**
 * @module jobs/job-runner
 * Which agent runs a job: its own host's, or for a protected host's upkeep the keeper's
 * (`jobs.runner_host_id`, keepers/). Reports, reconciliation and cancels go by the runner.
 */
import { jobs } from "@fleetback/db";
import { and, eq, isNull, or, type SQL } from "drizzle-orm";

/**
 * Jobs whose agent is `hostId`'s. Two indexed arms rather than coalesce(), so a heartbeat's
 * reconciliation reads through jobs_host_id_kind_idx and jobs_runner_host_id_idx.
 */
export function runsOn(hostId: string): SQL {
  return or(and(eq(jobs.hostId, hostId), isNull(jobs.runnerHostId)), eq(jobs.runnerHostId, hostId)) as SQL;
}

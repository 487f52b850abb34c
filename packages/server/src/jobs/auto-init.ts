/**
 * @module jobs/auto-init
 * The auto-init rule (packages/protocol/PROTOCOL.md, "On hello"): when an agent connects, its host
 * has repository credentials bound and no `init` job in its history (any status), the server
 * dispatches an `init` job. A failed init is therefore never retried by itself; an operator
 * re-initialises manually.
 *
 * Two hellos of one host can race (a reconnect while the old socket lingers, or two replicas).
 * The decision and the insert happen in one transaction holding the host row `FOR UPDATE` (the
 * start's claim, start-job.ts), so the second hello waits, then sees the first one's job.
 */
import { type Database, hosts, jobs } from "@fleetback/db";
import { and, eq } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import { loadHostCredentials } from "../hosts/credentials.js";
import { startJobs } from "./start-job.js";

export type AutoInitOutcome =
  | { action: "dispatched"; jobId: string }
  | { action: "skipped"; reason: "host_gone" | "no_repo_credentials" | "init_in_history" | "offline" };

async function hasInitJob(db: Database, hostId: string): Promise<boolean> {
  const [earlier] = await db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.hostId, hostId), eq(jobs.kind, "init")))
    .limit(1);
  return earlier !== undefined;
}

/**
 * `repoBound` is what a hello already knows from its initial push (whether the repository slot was
 * sent); without it the slot is read here, under the host lock.
 */
export async function runAutoInit(
  deps: Pick<ServerDeps, "db" | "keys" | "log" | "hub" | "clock" | "ids">,
  hostId: string,
  repoBound?: boolean,
): Promise<AutoInitOutcome> {
  // Every hello asks; nearly always the answer is no. The two cheap noes need no lock: an init
  // job never leaves the history once it was sent, and a slot the push left out stays unsent.
  if (repoBound === false) {
    return { action: "skipped", reason: "no_repo_credentials" };
  }
  if (repoBound === true && (await hasInitJob(deps.db, hostId))) {
    return { action: "skipped", reason: "init_in_history" };
  }
  const started = await startJobs(
    deps,
    [
      {
        kind: "init",
        hostId,
        actor: { kind: "system" },
        command: (jobId) => ({ job_id: jobId, kind: "init", requires_admin_creds: false }),
        // Never sent, so never failed: without the row the next hello tries again.
        offline: "refuse",
      },
    ],
    async (tx) => {
      const [host] = await tx.select({ id: hosts.id }).from(hosts).where(eq(hosts.id, hostId)).for("update");
      if (!host) {
        return "host_gone" as const;
      }
      // Only credentials the agent actually received count: an unreadable slot was not pushed.
      const bound =
        repoBound ?? (await loadHostCredentials(tx, deps.keys.secret, hostId)).repo.state === "bound";
      if (!bound) {
        return "no_repo_credentials" as const;
      }
      return (await hasInitJob(tx, hostId)) ? ("init_in_history" as const) : undefined;
    },
  );
  if ("declined" in started) {
    return { action: "skipped", reason: started.declined };
  }
  const [sent] = started.results;
  if (!sent?.ok) {
    return { action: "skipped", reason: "offline" };
  }
  deps.log.info({ host_id: hostId, job_id: sent.job.id }, "repository auto-init dispatched");
  return { action: "dispatched", jobId: sent.job.id };
}

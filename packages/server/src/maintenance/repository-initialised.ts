/**
 * @module maintenance/repository-initialised
 * Whether the server knows the host's repository exists, so the Maintenance tab need not offer
 * "Initialise" (issue 17). The evidence is a job that needed the repository and succeeded: an
 * `init` (which also succeeds when restic finds it already initialised), a backup, check, forget
 * or prune. Only jobs created since the host's credentials last changed count: new credentials
 * may name a new, empty repository, and then Initialise is what the operator needs. (The
 * credential row has one timestamp for both slots, so binding the admin slot also asks for new
 * evidence; the next successful backup gives it.) Without evidence the button stays: offering it
 * once too often is harmless, init of an existing repository changes nothing.
 */
import { type Database, hostCredentials, jobs } from "@fleetback/db";
import type { JobKind } from "@fleetback/protocol";
import { and, desc, eq, gte, inArray } from "drizzle-orm";

/** Job kinds whose success means restic opened the repository with the current credentials. */
export const REPOSITORY_EVIDENCE_KINDS = [
  "init",
  "backup",
  "check",
  "forget",
  "prune",
] as const satisfies readonly JobKind[];

export interface InitialisedEvidence {
  jobId: string;
  kind: JobKind;
  finishedAt: Date | null;
}

/** The newest job proving the repository exists, or undefined when the server does not know. */
export async function repositoryInitialisedEvidence(
  db: Database,
  hostId: string,
): Promise<InitialisedEvidence | undefined> {
  const [credentials] = await db
    .select({ updatedAt: hostCredentials.updatedAt, repo: hostCredentials.repoSealed })
    .from(hostCredentials)
    .where(eq(hostCredentials.hostId, hostId));
  if (!credentials?.repo) {
    return undefined;
  }
  const [job] = await db
    .select({ jobId: jobs.id, kind: jobs.kind, finishedAt: jobs.finishedAt })
    .from(jobs)
    .where(
      and(
        eq(jobs.hostId, hostId),
        eq(jobs.status, "succeeded"),
        inArray(jobs.kind, [...REPOSITORY_EVIDENCE_KINDS]),
        gte(jobs.createdAt, credentials.updatedAt),
      ),
    )
    .orderBy(desc(jobs.createdAt))
    .limit(1);
  return job;
}

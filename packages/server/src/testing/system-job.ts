/**
 * @module testing/system-job
 * What the job page tests seed: a job the system started on a host, put in whatever state
 * (running with progress, ended with a summary, stopped part-way) the page is to show.
 */
import type { Job, NewJob } from "@fleetback/db";
import type { JobKind } from "@fleetback/protocol";
import { seedJob } from "./seed.js";
import type { TestDeps } from "./test-deps.js";

/** Seeds a `kind` job the system started on `hostId`, with `fields` over what creating it set. */
export function seedSystemJob(
  deps: TestDeps,
  hostId: string,
  kind: JobKind,
  fields: Partial<NewJob> = {},
): Promise<Job> {
  return seedJob(deps, { hostId, kind, actorKind: "system" }, fields);
}

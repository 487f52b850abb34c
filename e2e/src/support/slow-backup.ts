/**
 * @module support/slow-backup
 * A backup that is still running when a test breaks something under it (a server killed, the
 * database cut): random files behind an upload cap, run now through the API, awaited until it
 * reports progress.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Api } from "./api.js";
import { eventually } from "./eventually.js";

/** Creates a source group backing up `includes`; returns its id. */
export async function createGroup(
  api: Api,
  hostId: string,
  name: string,
  includes: string[],
): Promise<string> {
  const group = await api.send<{ source_group: { id: string } }>(
    "POST",
    `/api/hosts/${hostId}/source-groups`,
    {
      name,
      includes,
      excludes: [],
      retention_policy: { last: 5 },
    },
  );
  if (group.status !== 201) {
    throw new Error(`source group ${name}: ${group.status} ${JSON.stringify(group.body)}`);
  }
  return group.body.source_group.id;
}

/** Waits until the job runs and has reported progress at least once. */
export async function waitProgress(api: Api, jobId: string): Promise<void> {
  await eventually(
    async () => {
      const { job } = await api.get<{ job: { status: string; progress: unknown } }>(`/api/jobs/${jobId}`);
      return job.status === "running" && job.progress !== null;
    },
    { what: `job ${jobId} to report progress` },
  );
}

/** `mib` MiB of random files uploaded at `upKbps`: started, and running with progress. */
export async function startSlowBackup(
  api: Api,
  hostId: string,
  options: { mib: number; upKbps: number },
): Promise<{ jobId: string; groupId: string; source: string }> {
  const source = mkdtempSync(join(tmpdir(), "fleetback-slow-src-"));
  for (let i = 0; i < options.mib; i++) {
    writeFileSync(join(source, `part-${i}.bin`), randomBytes(2 ** 20));
  }
  const groupId = await createGroup(api, hostId, "data", [source]);
  const capped = await api.send("PUT", `/api/hosts/${hostId}/bandwidth`, {
    up_kbps: options.upKbps,
    down_kbps: null,
  });
  if (capped.status !== 200) {
    throw new Error(`bandwidth cap: ${capped.status}`);
  }
  const started = await api.send<{ job_id: string }>(
    "POST",
    `/api/hosts/${hostId}/source-groups/${groupId}/run`,
  );
  if (started.status !== 201) {
    throw new Error(`run now: ${started.status} ${JSON.stringify(started.body)}`);
  }
  await waitProgress(api, started.body.job_id);
  return { jobId: started.body.job_id, groupId, source };
}

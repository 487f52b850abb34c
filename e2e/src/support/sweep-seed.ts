/**
 * @module support/sweep-seed
 * The data the page sweep (pages-browser.test.ts) opens every page with, so that every table has
 * rows and the longest things people type are in them: on the enrolled host two snapshots (the
 * second with a long path), a succeeded and a failed backup (an open alert), a compare, a drill
 * and a restore job (64-character snapshot ids), three groups (one with a long name) on a schedule;
 * two hosts that announced themselves with 60-character names, one approved and one waiting; an
 * unused enrolment token.
 */
import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { Api } from "./api.js";
import { eventually } from "./eventually.js";
import type { RestServer } from "./rest-server.js";
import { waitJob } from "./stack.js";

/** Names as long as people make them: 60 characters for hosts, near the limits for the rest. */
export const LONG_HOST = "web-frontend-eu-west-1a-production-cluster-node-0042.example";
export const LONG_PENDING = "db-replica-eu-central-1b-analytics-warehouse-node-0007.local";
export const LONG_USER = "operations.on-call.engineer-with-a-long-name@example.org";
export const LONG_GROUP = "nightly-postgresql-cluster-dump-and-configuration-files";
export const LONG_DIR = "application-data-with-a-rather-long-directory-name-for-exports";

interface JobJson {
  id: string;
  status: string;
  error: string | null;
}

export interface SweepData {
  snapshotId: string;
  goodJob: string;
  failedJob: string;
  diffJob: string;
  drillJob: string;
  restoreJob: string;
  /** The approved host with a long name, which never connected. */
  longHostId: string;
  /** A host that announced itself with a long name and waits for approval. */
  pendingId: string;
  /** A policy with long names, at its second version. */
  policyId: string;
  /** A file the catalogue holds (issue 38.3): the search and version pages list it. */
  cataloguedPath: string;
}

/** Seeds the sweep's data on `hostId`, whose agent is running and its repository ready. */
export async function seedSweep(api: Api, rest: RestServer, hostId: string): Promise<SweepData> {
  // Not named after the repository user: the agent scrubs its credentials (user name too) as "***".
  const source = mkdtempSync(join(tmpdir(), "fleetback-site-"));
  mkdirSync(join(source, "etc", "nginx", "sites-available"), { recursive: true });
  writeFileSync(join(source, "etc", "hostname"), "web-01\n");
  writeFileSync(join(source, "etc", "nginx", "nginx.conf"), "worker_processes auto;\n");
  writeFileSync(join(source, "etc", "nginx", "sites-available", "default"), "server { listen 80; }\n");
  const group = await api.send<{ source_group: { id: string } }>(
    "POST",
    `/api/hosts/${hostId}/source-groups`,
    { name: "system-config", includes: [source] },
  );
  expect(group.status, JSON.stringify(group.body)).toBe(201);
  const broken = await api.send<{ source_group: { id: string } }>(
    "POST",
    `/api/hosts/${hostId}/source-groups`,
    { name: "database-dump", includes: [source], pre_hook: "echo dump refused; exit 7", retry_max: 0 },
  );
  expect(broken.status, JSON.stringify(broken.body)).toBe(201);
  const longPath = join(source, "var", "lib", LONG_DIR, "exports");
  mkdirSync(longPath, { recursive: true });
  const long = await api.send<{ source_group: { id: string } }>(
    "POST",
    `/api/hosts/${hostId}/source-groups`,
    { name: LONG_GROUP, includes: [longPath, join(source, "etc", "nginx", "sites-available")] },
  );
  expect(long.status, JSON.stringify(long.body)).toBe(201);
  const schedule = await api.send("POST", `/api/hosts/${hostId}/schedules`, {
    cron: "0 3 * * *",
    source_group_ids: [group.body.source_group.id, broken.body.source_group.id, long.body.source_group.id],
  });
  expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);

  const run = async (groupId: string) => {
    const started = await api.send<{ job_id: string }>(
      "POST",
      `/api/hosts/${hostId}/source-groups/${groupId}/run`,
    );
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    return waitJob<JobJson>(api, started.body.job_id);
  };
  const good = await run(group.body.source_group.id);
  expect(good.status, good.error ?? "").toBe("succeeded");
  const goodJob = good.id;
  const bad = await run(broken.body.source_group.id);
  expect(bad.status).toBe("failed");
  const failedJob = bad.id;
  // A second snapshot with a long path in it, for a compare job that lists it.
  writeFileSync(join(longPath, "2026-11-28-customer-report-archive-final-version.csv"), "id,total\n");
  expect((await run(group.body.source_group.id)).status).toBe("succeeded");
  const [newer, older] = await eventually(
    async () => {
      const { snapshots } = await api.get<{ snapshots: Array<{ id: string }> }>(
        `/api/hosts/${hostId}/snapshots`,
      );
      return snapshots.length >= 2 ? snapshots.map((s) => s.id) : undefined;
    },
    { what: "both snapshots reported" },
  );
  const snapshotId = newer ?? "";
  const started = async (path: string, body: unknown) => {
    const res = await api.send<{ job_id: string }>("POST", path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const job = await waitJob<JobJson>(api, res.body.job_id);
    expect(job.status, `${path}: ${job.error ?? ""}`).toBe("succeeded");
    return job.id;
  };
  const diffJob = await started(`/api/hosts/${hostId}/diff`, { snapshot_a: older, snapshot_b: newer });
  const drillJob = await started(`/api/hosts/${hostId}/jobs`, { kind: "drill" });
  const restoreJob = await started(`/api/hosts/${hostId}/restore`, {
    snapshot_id: newer,
    paths: [join(source, "etc")],
    in_place: false,
    target_dir: join(mkdtempSync(join(tmpdir(), "fleetback-restored-")), LONG_DIR),
  });

  // One more backup after the jobs above (each stops the catalogue step of the backup before it):
  // its catalogue is what the search and version pages list.
  writeFileSync(join(source, "etc", "nginx", "nginx.conf"), "worker_processes 4;\n");
  const last = await run(group.body.source_group.id);
  expect(last.status, last.error ?? "").toBe("succeeded");
  const cataloguedPath = join(source, "etc", "nginx", "nginx.conf");
  await eventually(
    async () => {
      const found = await api.get<{ hits: unknown[] }>("/api/search/files?q=nginx.conf");
      return found.hits.length > 0;
    },
    { what: "nginx.conf in the catalogue" },
  );

  // Two hosts that announced themselves with long names: one approved (never connected), one waiting.
  const announce = async (hostname: string) => {
    const key = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" }).x ?? "";
    const res = await fetch(`${api.baseUrl}/api/agents/announce`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        hostname,
        os: "linux",
        arch: "x64",
        agent_version: "0.1.0",
        tool_version: "0.18.0",
        public_key: Buffer.from(key, "base64url").toString("base64"),
      }),
    });
    const body = (await res.json()) as { pending_id: string };
    expect(res.status, JSON.stringify(body)).toBe(201);
    return body.pending_id;
  };
  const approved = await api.send<{ host_id: string }>(
    "POST",
    `/api/pending-hosts/${await announce(LONG_HOST)}/approve`,
  );
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  const longHostId = approved.body.host_id;
  // Labels as long as a label may be, so their chips must wrap (issue 37).
  const longValue = "x".repeat(63);
  const labelled = await api.send("PUT", `/api/hosts/${longHostId}/labels`, {
    labels: Object.fromEntries(
      ["env", "role", "team", "tier", "zone", "owner"].map((key) => [
        `example.com/${key}-${longValue.slice(0, 40)}`,
        longValue,
      ]),
    ),
  });
  expect(labelled.status, JSON.stringify(labelled.body)).toBe(200);
  const pendingId = await announce(LONG_PENDING);
  // A policy with long paths and a long selector, edited once so its page lists a change.
  const policyBody = (excludes: string[]) => ({
    name: "a-policy-with-a-rather-long-name-for-a-phone-screen",
    selector: `example.com/env-${longValue.slice(0, 40)}=${longValue}`,
    spec: {
      groups: [{ name: `group-${LONG_DIR}`.slice(0, 64), includes: [longPath], excludes }],
      schedules: [{ name: "nightly", cron: "0 2 * * *", groups: [`group-${LONG_DIR}`.slice(0, 64)] }],
    },
  });
  const policy = await api.send<{ policy: { id: string } }>("POST", "/api/policies", policyBody([]));
  expect(policy.status, JSON.stringify(policy.body)).toBe(201);
  const policyId = policy.body.policy.id;
  const edited = await api.send("PUT", `/api/policies/${policyId}`, policyBody([`${longPath}/cache/**`]));
  expect(edited.status, JSON.stringify(edited.body)).toBe(200);
  const token = await api.send("POST", "/api/enrollment-tokens", {
    repository: { url: `rest:${rest.url}/${LONG_DIR}/`, username: LONG_DIR },
    initial_paths: [longPath],
  });
  expect(token.status, JSON.stringify(token.body)).toBe(201);
  return {
    snapshotId,
    goodJob,
    failedJob,
    diffJob,
    drillJob,
    restoreJob,
    longHostId,
    pendingId,
    policyId,
    cataloguedPath,
  };
}

/**
 * Issue 5 end to end with real processes: forget with a keep-last policy removes the right
 * snapshots of one tag and leaves the other tag alone; prune with admin credentials succeeds;
 * check reports `ok`; a repository made unreadable raises `check_failed`, shown on the fleet.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAgent } from "./support/agent-process.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { useStack, waitJob as waitJobOf } from "./support/stack.js";
import { FETCHED_TOOLS, missingNote, RESTIC, type ResticVersion, toolsPresent } from "./support/tools.js";

interface JobJson {
  id: string;
  status: string;
  error: string | null;
  summary: Record<string, unknown> | null;
}
interface SnapshotJson {
  id: string;
  tags: string[];
  time: string;
}

function sourceTree(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `fleetback-${label}-`));
  writeFileSync(join(dir, "data.bin"), randomBytes(64 * 1024));
  return dir;
}

const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(
  `maintenance: forget, prune, check and alerts against rest-server${missing}`,
  () => {
    // The ticker looks every second, so a cadence that names seconds is dispatched at once.
    const stack = useStack({ serverEnv: { FLEETBACK_MAINTENANCE_INTERVAL: "1s" } });

    const waitJob = (jobId: string) => waitJobOf<JobJson>(stack.api, jobId);

    async function start(hostId: string, kind: string): Promise<JobJson> {
      const res = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${hostId}/jobs`, { kind });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return waitJob(res.body.job_id);
    }

    async function backup(hostId: string, groupId: string): Promise<void> {
      const res = await stack.api.send<{ job_id: string }>(
        "POST",
        `/api/hosts/${hostId}/source-groups/${groupId}/run`,
      );
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect((await waitJob(res.body.job_id)).status).toBe("succeeded");
    }

    async function group(hostId: string, name: string, last: number): Promise<string> {
      const res = await stack.api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${hostId}/source-groups`,
        {
          name,
          includes: [sourceTree(name)],
          retention_policy: { last },
        },
      );
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.source_group.id;
    }

    const snapshotsByTag = async (hostId: string) => {
      const { snapshots } = await stack.api.get<{ snapshots: SnapshotJson[] }>(
        `/api/hosts/${hostId}/snapshots`,
      );
      const byTag: Record<string, string[]> = {};
      for (const snapshot of snapshots) {
        for (const tag of snapshot.tags) {
          byTag[tag] = [...(byTag[tag] ?? []), snapshot.id];
        }
      }
      return byTag;
    };

    for (const restic of ["0.18", "0.14"] as const satisfies readonly ResticVersion[]) {
      it(`restic ${restic}: forget keeps by tag, prune with admin credentials, check ok, then check_failed`, async () => {
        const user = `mt-${restic.replace(".", "")}`;
        const host = await enrolHost({ api: stack.api, rest: stack.rest, restic, user });
        stack.agents.push(startAgent(["run"], host.dirs, host.env));
        await waitHostReady(stack.api, host.hostId);
        const alpha = await group(host.hostId, "alpha", 1);
        const beta = await group(host.hostId, "beta", 5);
        for (let i = 0; i < 3; i++) {
          await backup(host.hostId, alpha);
        }
        await backup(host.hostId, beta);
        await backup(host.hostId, beta);
        const before = await eventually(
          async () => {
            const tags = await snapshotsByTag(host.hostId);
            return tags.alpha?.length === 3 && tags.beta?.length === 2 ? tags : undefined;
          },
          { what: "five snapshots reported" },
        );

        const forget = await start(host.hostId, "forget");
        expect(forget.status, forget.error ?? "").toBe("succeeded");
        const after = await eventually(
          async () => {
            const tags = await snapshotsByTag(host.hostId);
            return tags.alpha?.length === 1 ? tags : undefined;
          },
          { what: "forget reflected in the snapshot list" },
        );
        // The newest alpha snapshot is the one kept (the list is newest first); beta is untouched.
        expect(after.alpha).toEqual([before.alpha?.[0]]);
        expect(after.beta).toEqual(before.beta);

        const refused = await stack.api.send("POST", `/api/hosts/${host.hostId}/jobs`, { kind: "prune" });
        expect(refused.status).toBe(409);
        // The admin slot: here the same rest-server user, which can delete (no append-only).
        const bound = await stack.api.send("PUT", `/api/hosts/${host.hostId}/admin-credentials`, {
          url: `rest:${stack.rest.url}/${user}/`,
          username: user,
          password: host.password,
          login_password: host.loginPassword,
        });
        expect(bound.status, JSON.stringify(bound.body)).toBe(200);
        const prune = await start(host.hostId, "prune");
        expect(prune.status, prune.error ?? "").toBe("succeeded");

        const check = await start(host.hostId, "check");
        expect(check.status, check.error ?? "").toBe("succeeded");
        const { stats } = await stack.api.get<{ stats: Record<string, unknown> }>(
          `/api/hosts/${host.hostId}/stats`,
        );
        expect(stats).toMatchObject({ last_check_status: "ok" });
        expect(stats.last_prune_at).toBeTruthy();
        expect(stats.last_forget_at).toBeTruthy();

        // Issue 17: the sizes are named for what restic reports. The prune's stats are compared
        // with restic's own answer about the same repository (nothing wrote to it since).
        const restUrl = new URL(stack.rest.url);
        const told = JSON.parse(
          execFileSync(RESTIC[restic], ["stats", "--mode", "raw-data", "--json", "--no-cache"], {
            encoding: "utf8",
            env: {
              PATH: process.env.PATH ?? "",
              RESTIC_REPOSITORY: `rest:${restUrl.protocol}//${user}:${encodeURIComponent(host.loginPassword)}@${restUrl.host}/${user}/`,
              RESTIC_PASSWORD: host.password,
            },
          }),
        ) as { total_size: number; total_uncompressed_size?: number };
        expect(told.total_size).toBeGreaterThan(0);
        expect(stats.stored_size_bytes).toBe(told.total_size);
        expect(stats.uncompressed_size_bytes).toBe(told.total_uncompressed_size ?? null);
        if (restic === "0.18") {
          expect(told.total_uncompressed_size).toBeGreaterThan(told.total_size);
        }
        const statsPage = await stack.api.text(`/hosts/${host.hostId}/maintenance`);
        const cell = (testid: string) =>
          new RegExp(`data-testid="${testid}">([^<]*)`).exec(statsPage)?.[1]?.trim();
        expect(cell("stats-size")).toMatch(/^[0-9.]+ (B|KiB|MiB)$/);
        if (restic === "0.14") {
          expect(cell("stats-uncompressed")).toBe("–");
        } else {
          expect(cell("stats-uncompressed")).toMatch(/^[0-9.]+ (B|KiB|MiB)$/);
          expect(cell("stats-uncompressed")).not.toBe(cell("stats-size"));
        }

        if (restic === "0.18") {
          // The real server's maintenance ticker dispatches a due check by itself; a cadence of
          // every second is due at its next look.
          const cadence = await stack.api.send("PUT", `/api/hosts/${host.hostId}/maintenance`, {
            check_cron: "* * * * * *",
            forget_enabled: false,
            prune_enabled: false,
          });
          expect(cadence.status, JSON.stringify(cadence.body)).toBe(200);
          const system = await eventually(
            async () => {
              const { jobs } = await stack.api.get<{ jobs: Array<JobJson & { actor_kind: string }> }>(
                `/api/jobs?host_id=${host.hostId}&kind=check&status=succeeded`,
              );
              return jobs.find((job) => job.actor_kind === "system");
            },
            { what: "a check dispatched by the maintenance ticker", timeoutMs: 120_000 },
          );
          expect(system.status).toBe("succeeded");
          await stack.api.send("PUT", `/api/hosts/${host.hostId}/maintenance`, { check_enabled: false });
          await eventually(
            async () => {
              const { jobs } = await stack.api.get<{ jobs: JobJson[] }>(
                `/api/jobs?host_id=${host.hostId}&kind=check`,
              );
              return jobs.every((job) => !["queued", "running"].includes(job.status));
            },
            { what: "no check job left running" },
          );
        }

        // Unreadable: every pack file overwritten with noise of the same size. (Deleting them makes
        // restic 0.14 retry the missing files against rest-server for many minutes.)
        const packs = join(stack.rest.dataDir, user, "data");
        for (const dir of readdirSync(packs)) {
          for (const file of readdirSync(join(packs, dir))) {
            const path = join(packs, dir, file);
            writeFileSync(path, randomBytes(statSync(path).size));
          }
        }
        const broken = await start(host.hostId, "check");
        expect(broken.status).toBe("failed");
        const { alerts } = await stack.api.get<{
          alerts: Array<{ host_id: string; kind: string; dedup_key: string }>;
        }>(`/api/alerts?state=open&host_id=${host.hostId}`);
        expect(alerts).toEqual([expect.objectContaining({ kind: "check_failed", dedup_key: "" })]);
        const fleet = await stack.api.get<{
          hosts: Array<{ id: string; last_check_status: string; open_alerts: number }>;
        }>("/api/hosts");
        expect(fleet.hosts.find((h) => h.id === host.hostId)).toMatchObject({
          last_check_status: "errors",
          open_alerts: 1,
        });
        const page = await stack.api.text(`/hosts/${host.hostId}/maintenance`);
        expect(page).toContain('<span class="status-errors">errors</span>');
      });
    }
  },
);

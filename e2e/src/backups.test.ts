/**
 * Issue 4 end to end with real processes: a source group and a schedule firing every few seconds
 * (6-field cron) produce backups with actor `schedule`; run-now works; the snapshots API shows
 * the new snapshot with size and file count on restic 0.18 and zeros on 0.14; job logs and
 * progress arrive; cancelling a long backup kills restic and ends `cancelled`, and on 0.14 as on
 * 0.18 leaves no lock in the repository (a check right after succeeds).
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type AgentDirs, type AgentRun, startAgent } from "./support/agent-process.js";
import { type EnrolledHost, enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { useStack, waitJob as waitJobOf } from "./support/stack.js";
import { FETCHED_TOOLS, missingNote, RESTIC, type ResticVersion, toolsPresent } from "./support/tools.js";

interface JobJson {
  id: string;
  kind: string;
  status: string;
  actor_kind: string;
  scheduled_id: string | null;
  source_group_id: string | null;
  progress: Record<string, unknown> | null;
  summary: Record<string, unknown> | null;
  error: string | null;
}
interface SnapshotJson {
  id: string;
  short_id: string;
  tags: string[];
  size_bytes: number | null;
  file_count: number | null;
}

function makeTree(files: number, bytes: number): string {
  const dir = mkdtempSync(join(tmpdir(), "fleetback-src-"));
  mkdirSync(join(dir, "sub dir"), { recursive: true });
  for (let i = 0; i < files; i++) {
    writeFileSync(join(dir, i % 2 ? "sub dir" : "", `file ${i} ünïcode.bin`), randomBytes(bytes));
  }
  writeFileSync(join(dir, "skip.log"), "excluded");
  return dir;
}

/**
 * restic backups of `source` running on this machine. Only this test's: other packages' tests run
 * restic backups of their own at the same time (a lock holder that lives until it is killed).
 */
function resticProcesses(source: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0");
      if (argv[0]?.endsWith("/restic") && argv.includes("backup") && argv.includes(source)) {
        found.push(pid);
      }
    } catch {
      // gone between listing and reading
    }
  }
  return found;
}

const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(
  `backups: groups, schedules, run-now, snapshots, cancel, retries${missing}`,
  () => {
    const stack = useStack();

    function enrol(restic: ResticVersion, user: string): Promise<EnrolledHost> {
      return enrolHost({ api: stack.api, rest: stack.rest, restic, user });
    }

    function run(dirs: AgentDirs, env: Record<string, string>): AgentRun {
      const agent = startAgent(["run"], dirs, env);
      stack.agents.push(agent);
      return agent;
    }

    const waitJob = (jobId: string, done?: string[]) => waitJobOf<JobJson>(stack.api, jobId, { done });

    async function createGroup(hostId: string, name: string, includes: string[]) {
      const res = await stack.api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${hostId}/source-groups`,
        {
          name,
          includes,
          excludes: ["*.log"],
          retention_policy: { last: 3 },
        },
      );
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.source_group.id;
    }

    for (const restic of ["0.18", "0.14"] as const) {
      it(`restic ${restic}: scheduled and run-now backups, snapshots with ${restic === "0.18" ? "sizes" : "zero sizes"}`, async () => {
        const { hostId, dirs, env } = await enrol(restic, `bk-${restic.replace(".", "")}`);
        run(dirs, env);
        await waitHostReady(stack.api, hostId);
        const source = makeTree(6, 4096);
        const groupId = await createGroup(hostId, "docs", [source]);

        const now = await stack.api.send<{ job_id: string }>(
          "POST",
          `/api/hosts/${hostId}/source-groups/${groupId}/run`,
        );
        expect(now.status, JSON.stringify(now.body)).toBe(201);
        const manual = await waitJob(now.body.job_id);
        expect(manual).toMatchObject({ status: "succeeded", actor_kind: "user", source_group_id: groupId });
        expect(manual.summary?.snapshot_id).toBeTruthy();
        const logs = await stack.api.get<{ lines: Array<{ line: string }> }>(`/api/jobs/${manual.id}/logs`);
        expect(logs.lines.length).toBeGreaterThan(0);

        const schedule = await stack.api.send<{ schedule: { id: string } }>(
          "POST",
          `/api/hosts/${hostId}/schedules`,
          {
            cron: "*/3 * * * * *",
            enabled: true,
            source_group_ids: [groupId],
          },
        );
        expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);
        const scheduled = await eventually(
          async () => {
            const { jobs } = await stack.api.get<{ jobs: JobJson[] }>(
              `/api/jobs?host_id=${hostId}&kind=backup&status=succeeded`,
            );
            return jobs.find((job) => job.actor_kind === "schedule");
          },
          { what: "a scheduled backup to succeed", timeoutMs: 90_000 },
        );
        expect(scheduled).toMatchObject({
          scheduled_id: schedule.body.schedule.id,
          source_group_id: groupId,
        });
        const disabled = await stack.api.send(
          "PUT",
          `/api/hosts/${hostId}/schedules/${schedule.body.schedule.id}`,
          {
            cron: "*/3 * * * * *",
            enabled: false,
            source_group_ids: [groupId],
          },
        );
        expect(disabled.status).toBe(200);

        const snapshots = await eventually(
          async () => {
            const body = await stack.api.get<{ snapshots: SnapshotJson[]; refreshed_at: string }>(
              `/api/hosts/${hostId}/snapshots`,
            );
            return body.snapshots.length >= 2 ? body : undefined;
          },
          { what: "two snapshots in the cache" },
        );
        const newest = snapshots.snapshots[0];
        expect(newest?.tags).toEqual(["docs"]);
        if (restic === "0.18") {
          expect(newest?.size_bytes).toBeGreaterThan(0);
          expect(newest?.file_count).toBe(6);
        } else {
          // 0.14 does not report them: unknown (null), never 0.
          expect(newest?.size_bytes).toBeNull();
          expect(newest?.file_count).toBeNull();
        }
      });
    }

    for (const restic of ["0.18", "0.14"] as const) {
      it(`restic ${restic}: cancelling a long backup kills restic, ends cancelled and leaves no lock behind`, async () => {
        const user = `bk-cancel-${restic.replace(".", "")}`;
        const { hostId, dirs, env, password, loginPassword } = await enrol(restic, user);
        run(dirs, env);
        await waitHostReady(stack.api, hostId);
        // 32 MiB behind a 64 KiB/s upload cap: minutes of work, so the cancel lands mid-run.
        const source = makeTree(8, 4 * 2 ** 20);
        expect(
          (await stack.api.send("PUT", `/api/hosts/${hostId}/bandwidth`, { up_kbps: 64, down_kbps: null }))
            .status,
        ).toBe(200);
        const groupId = await createGroup(hostId, "big", [source]);
        const started = await stack.api.send<{ job_id: string }>(
          "POST",
          `/api/hosts/${hostId}/source-groups/${groupId}/run`,
        );
        await eventually(
          async () => {
            const { job } = await stack.api.get<{ job: JobJson }>(`/api/jobs/${started.body.job_id}`);
            return job.status === "running" && job.progress !== null;
          },
          { what: "the backup to report progress" },
        );
        expect(resticProcesses(source).length).toBeGreaterThan(0);
        const cancel = await stack.api.send("POST", `/api/jobs/${started.body.job_id}/cancel`);
        expect(cancel.status).toBeLessThan(300);
        const job = await waitJob(started.body.job_id);
        expect(job.status).toBe("cancelled");
        await eventually(async () => resticProcesses(source).length === 0, {
          what: "no restic backup process left",
          timeoutMs: 15_000,
        });

        // restic before 0.17 removes its lock only on SIGINT: the stop must send it first, or the
        // lock stays and every job that needs an exclusive one (check, forget, prune) fails.
        const url = new URL(stack.rest.url);
        const locks = execFileSync(RESTIC[restic], ["list", "locks", "--no-lock", "--no-cache"], {
          encoding: "utf8",
          env: {
            PATH: process.env.PATH ?? "",
            RESTIC_REPOSITORY: `rest:${url.protocol}//${user}:${encodeURIComponent(loginPassword)}@${url.host}/${user}/`,
            RESTIC_PASSWORD: password,
          },
        });
        expect(locks.trim()).toBe("");
        const check = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${hostId}/jobs`, {
          kind: "check",
        });
        expect(check.status, JSON.stringify(check.body)).toBe(201);
        const checked = await waitJob(check.body.job_id);
        expect(checked.status, checked.error ?? "").toBe("succeeded");
      });
    }

    it("a backup due while the host is offline runs when it returns", async () => {
      const { hostId, dirs, env } = await enrol("0.18", "bk-pending");
      const first = run(dirs, env);
      await waitHostReady(stack.api, hostId);
      const source = makeTree(2, 1024);
      const created = await stack.api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${hostId}/source-groups`,
        { name: "late", includes: [source], retry_max: 20, retry_backoff_seconds: 1 },
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const groupId = created.body.source_group.id;
      await first.stop();
      await eventually(
        async () =>
          (await stack.api.get<{ host: { status: string } }>(`/api/hosts/${hostId}`)).host.status ===
          "offline",
        { what: "host offline" },
      );
      const queued = await stack.api.send<{ pending_run_id: string }>(
        "POST",
        `/api/hosts/${hostId}/source-groups/${groupId}/run`,
      );
      expect(queued.status, JSON.stringify(queued.body)).toBe(202);
      expect(queued.body.pending_run_id).toBeTruthy();
      run(dirs, env);
      const job = await eventually(
        async () => {
          const { jobs } = await stack.api.get<{ jobs: JobJson[] }>(
            `/api/jobs?host_id=${hostId}&kind=backup`,
          );
          return jobs.find(
            (candidate) => candidate.source_group_id === groupId && candidate.status === "succeeded",
          );
        },
        { what: "the pending backup to run once the host is back", timeoutMs: 90_000 },
      );
      expect(job.actor_kind).toBe("user");
    });
  },
);

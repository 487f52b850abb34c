/**
 * Issue 31 end to end, on restic 0.18 and 0.14 with a real rest-server: a repository made by hand
 * with the restic CLI before Fleetback, holding snapshots of two other machines (alpha, beta)
 * under the tag the host's group uses, is adopted by an enrolled host whose rest-server user is
 * `adopt`. Its snapshots show at once as other machines'; the host's backups, freshness, metrics,
 * policy forget and restores act on its own snapshots only, and restic itself still lists every
 * other machine's snapshot afterwards. A path holding the user name restores its files; a restore
 * that matches nothing fails with a sentence.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAgent } from "./support/agent-process.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { useStack, waitJob } from "./support/stack.js";
import { FETCHED_TOOLS, missingNote, RESTIC, type ResticVersion, toolsPresent } from "./support/tools.js";

interface JobJson {
  status: string;
  error: string | null;
  summary: Record<string, unknown> | null;
}
interface SnapshotJson {
  id: string;
  hostname: string;
  time: string;
  own: boolean;
}

const METRICS_TOKEN = "shared-repository-metrics-token-0123456789";
const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent() });

describe.skipIf(missing !== "")(`a repository shared with other machines${missing}`, () => {
  const stack = useStack({ serverEnv: { FLEETBACK_METRICS_TOKEN: METRICS_TOKEN } });

  for (const restic of ["0.18", "0.14"] as const satisfies readonly ResticVersion[]) {
    it(`restic ${restic}: adopted, listed as foreign, and only the host's own snapshots are kept, forgotten, counted and restored`, async () => {
      const user = `adopt${restic.replace(".", "")}`;
      const password = `hand-made repository ${restic} pw`;
      // The admin adds the user by hand, as for any rest-server repository (the same password).
      await stack.rest.runHtpasswdSnippet(
        `htpasswd -b -B /var/lib/rest-server/.htpasswd ${user} '${password}'`,
      );
      const url = new URL(stack.rest.url);
      const cliEnv = {
        PATH: process.env.PATH ?? "",
        RESTIC_REPOSITORY: `rest:${url.protocol}//${user}:${encodeURIComponent(password)}@${url.host}/${user}/`,
        RESTIC_PASSWORD: password,
      };
      const cli = (...args: string[]) =>
        execFileSync(RESTIC[restic], ["--no-cache", ...args], { encoding: "utf8", env: cliEnv });
      const resticHostnames = () =>
        (JSON.parse(cli("snapshots", "--json", "--no-lock")) as Array<{ hostname: string }>)
          .map((s) => s.hostname)
          .sort();

      // Before Fleetback: two machines back up into one repository under the tag `default`.
      const base = mkdtempSync(join(tmpdir(), "fleetback-shared-"));
      const theirs = join(base, `${user}-alpha`);
      mkdirSync(theirs);
      writeFileSync(join(theirs, "alpha.txt"), "alpha's data\n");
      cli("init");
      for (const machine of ["alpha", "alpha", "beta"]) {
        cli("backup", "--host", machine, "--tag", "default", theirs);
      }

      const host = await enrolHost({
        api: stack.api,
        rest: stack.rest,
        restic,
        user,
        existingPassword: password,
      });
      stack.agents.push(startAgent(["run"], host.dirs, host.env));
      await waitHostReady(stack.api, host.hostId);

      const listed = async (count: number) =>
        eventually(
          async () => {
            const { snapshots } = await stack.api.get<{ snapshots: SnapshotJson[] }>(
              `/api/hosts/${host.hostId}/snapshots`,
            );
            return snapshots.length === count ? snapshots : undefined;
          },
          { what: `${count} snapshots listed` },
        );
      // Listed as soon as the credentials are bound (the init finds the repository), as foreign.
      const adopted = await listed(3);
      expect(adopted.map((s) => [s.hostname, s.own])).toEqual(
        expect.arrayContaining([
          ["alpha", false],
          ["beta", false],
        ]),
      );
      const hostRow = async () =>
        (
          await stack.api.get<{
            host: { snapshot_count: number; other_snapshot_count: number; restic_host: string };
          }>(`/api/hosts/${host.hostId}`)
        ).host;
      expect(await hostRow()).toMatchObject({ snapshot_count: 0, other_snapshot_count: 3 });

      // The host's own group, under the same tag, keeping one; its path holds the user name.
      const mine = join(base, `${user}-web`);
      mkdirSync(mine);
      const created = await stack.api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${host.hostId}/source-groups`,
        { name: "default", includes: [mine], retention_policy: { last: 1 } },
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const groupId = created.body.source_group.id;
      for (const content of ["first\n", "second\n"]) {
        writeFileSync(join(mine, "web.txt"), content);
        const run = await stack.api.send<{ job_id: string }>(
          "POST",
          `/api/hosts/${host.hostId}/source-groups/${groupId}/run`,
        );
        expect(run.status, JSON.stringify(run.body)).toBe(201);
        const job = await waitJob<JobJson>(stack.api, run.body.job_id);
        expect(job.status, job.error ?? "").toBe("succeeded");
      }
      const { restic_host } = await hostRow();
      const afterBackups = await listed(5);
      const own = afterBackups.filter((s) => s.own);
      expect(own.map((s) => s.hostname)).toEqual([restic_host, restic_host]);

      // Another machine backs up later: the host's freshness and metrics stay with its own.
      cli("backup", "--host", "beta", "--tag", "default", theirs);
      const forget = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${host.hostId}/jobs`, {
        kind: "forget",
      });
      expect(forget.status, JSON.stringify(forget.body)).toBe(201);
      const forgotten = await waitJob<JobJson>(stack.api, forget.body.job_id);
      expect(forgotten.status, forgotten.error ?? "").toBe("succeeded");
      expect(forgotten.summary).toMatchObject({ snapshots_removed: 1 });
      // restic itself: all of alpha's and beta's are there, one of the host's.
      expect(resticHostnames()).toEqual(["alpha", "alpha", "beta", "beta", restic_host].sort());
      const afterForget = await listed(5);
      const newestOwn = afterForget.filter((s) => s.own);
      expect(newestOwn).toHaveLength(1);
      expect(await hostRow()).toMatchObject({ snapshot_count: 1, other_snapshot_count: 4 });
      const { source_groups } = await stack.api.get<{
        source_groups: Array<{ id: string; freshness: { last_snapshot_at: string | null } | null }>;
      }>(`/api/hosts/${host.hostId}/source-groups`);
      const freshness = source_groups.find((g) => g.id === groupId)?.freshness;
      expect(new Date(freshness?.last_snapshot_at ?? 0).getTime()).toBe(
        new Date(newestOwn[0]?.time ?? 1).getTime(),
      );
      const metrics = await (
        await fetch(`${stack.server.url}/metrics`, {
          headers: { Connection: "close", Authorization: `Bearer ${METRICS_TOKEN}` },
        })
      ).text();
      const line = metrics
        .split("\n")
        .find(
          (l) => l.startsWith("fleetback_group_last_success_timestamp_seconds{") && l.includes(host.hostId),
        );
      expect(Number(line?.split(" ").at(-1))).toBe(new Date(newestOwn[0]?.time ?? 1).getTime() / 1000);

      // The snapshots page marks other machines' snapshots and offers no Forget for them.
      const page = await stack.api.text(`/hosts/${host.hostId}/snapshots`);
      expect(page.match(/data-testid="snapshot-foreign"/g)?.length).toBe(4);
      expect(page).toContain("other machine: alpha");
      expect(page).toContain(`/snapshots/${newestOwn[0]?.id}/forget`);
      for (const foreign of afterForget.filter((s) => !s.own)) {
        expect(page).not.toContain(`/snapshots/${foreign.id}/forget`);
      }
      // Forgetting one of theirs by id is refused.
      const refused = await stack.api.send(
        "POST",
        `/api/hosts/${host.hostId}/snapshots/${afterForget.find((s) => !s.own)?.id}/forget`,
        {},
      );
      expect(refused.status).toBe(409);

      // A path holding the user name restores its files.
      const target = mkdtempSync(join(tmpdir(), "fleetback-shared-to-"));
      const restore = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${host.hostId}/restore`, {
        snapshot_id: newestOwn[0]?.id,
        paths: [mine],
        in_place: false,
        target_dir: target,
      });
      expect(restore.status, JSON.stringify(restore.body)).toBe(201);
      const restored = await waitJob<JobJson>(stack.api, restore.body.job_id);
      expect(restored.status, restored.error ?? "").toBe("succeeded");
      expect(readFileSync(join(target, mine, "web.txt"), "utf8")).toBe("second\n");

      // A restore whose path matches nothing fails and says so.
      const nowhere = mkdtempSync(join(tmpdir(), "fleetback-shared-none-"));
      const none = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${host.hostId}/restore`, {
        snapshot_id: newestOwn[0]?.id,
        paths: [join(base, "no-such-folder")],
        in_place: false,
        target_dir: nowhere,
      });
      expect(none.status, JSON.stringify(none.body)).toBe(201);
      const failed = await waitJob<JobJson>(stack.api, none.body.job_id);
      expect(failed.status).toBe("failed");
      expect(failed.error ?? "").toMatch(/match|nothing|no file/i);
      expect(existsSync(join(nowhere, base))).toBe(false);
    }, 300_000);
  }
});

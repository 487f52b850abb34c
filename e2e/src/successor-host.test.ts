/**
 * Issue 38.2 end to end with real processes (restic 0.18, rest-server, real agents): a host's
 * machine dies (its agent stops and its disk is gone); an admin mints a successor token on the
 * host; a new agent with empty directories enrols with it and becomes the same host. Its first
 * hello gets the repository, groups and schedules; one action ("recover everything") brings the
 * group's files back in place from the old machine's snapshot, byte-identical with their mode; its
 * first backup lists that snapshot beside its own in one history. The old agent's token no longer
 * opens anything.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeAgentDirs, runAgent, startAgent } from "./support/agent-process.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { useStack, waitJob as waitJobOf } from "./support/stack.js";
import { FETCHED_TOOLS, missingNote, RESTIC, toolsPresent } from "./support/tools.js";

interface JobJson {
  id: string;
  status: string;
  error: string | null;
}

interface Snapshots {
  snapshots: Array<{ id: string; hostname: string; time: string }>;
}

const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`a successor machine takes over a dead host${missing}`, () => {
  const stack = useStack();
  const waitJob = (jobId: string) => waitJobOf<JobJson>(stack.api, jobId);

  for (const restic of ["0.18", "0.14"] as const) {
    it(`restic ${restic}: the new machine is the same host, continues its history and restores its old snapshot`, async () => {
      const old = await enrolHost({
        api: stack.api,
        rest: stack.rest,
        restic,
        user: `successor-${restic.replace(".", "")}`,
      });
      const name = `db-primary-${restic.replace(".", "")}`;
      const oldAgent = startAgent(["run"], old.dirs, old.env);
      stack.agents.push(oldAgent);
      await waitHostReady(stack.api, old.hostId);
      const renamed = await stack.api.send("PATCH", `/api/hosts/${old.hostId}`, { name });
      expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
      const labelled = await stack.api.send("PATCH", `/api/hosts/${old.hostId}/labels`, {
        set: { role: "db" },
      });
      expect(labelled.status, JSON.stringify(labelled.body)).toBe(200);

      const source = mkdtempSync(join(tmpdir(), "fleetback-successor-src-"));
      const file = join(source, "data.bin");
      writeFileSync(file, Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 17) % 253)));
      chmodSync(file, 0o600);
      const group = await stack.api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${old.hostId}/source-groups`,
        { name: "data", includes: [source] },
      );
      expect(group.status, JSON.stringify(group.body)).toBe(201);
      const runGroup = async () => {
        const run = await stack.api.send<{ job_id: string }>(
          "POST",
          `/api/hosts/${old.hostId}/source-groups/${group.body.source_group.id}/run`,
        );
        expect(run.status, JSON.stringify(run.body)).toBe(201);
        const job = await waitJob(run.body.job_id);
        expect(job.status, job.error ?? "").toBe("succeeded");
      };
      await runGroup();
      const first = await eventually(
        async () => (await stack.api.get<Snapshots>(`/api/hosts/${old.hostId}/snapshots`)).snapshots[0],
        { what: "the old machine's snapshot in the cache" },
      );
      const original = readFileSync(file);

      // The machine dies: its agent stops and its directories (its token with them) are gone.
      const oldToken = (
        JSON.parse(readFileSync(join(old.dirs.configDir, "agent.json"), "utf8")) as {
          agent_token: string;
        }
      ).agent_token;
      await oldAgent.stop();
      rmSync(dirname(old.dirs.configDir), { recursive: true, force: true });
      rmSync(file);

      const minted = await stack.api.send<{ token: string; host_id: string }>(
        "POST",
        `/api/hosts/${old.hostId}/successor-token`,
        {},
      );
      expect(minted.status, JSON.stringify(minted.body)).toBe(201);
      const dirs = await makeAgentDirs();
      const enrolled = await runAgent(
        ["enroll", "--server", stack.api.baseUrl, "--token", minted.body.token],
        dirs,
        old.env,
      );
      expect(enrolled.code, enrolled.output).toBe(0);
      const config = JSON.parse(readFileSync(join(dirs.configDir, "agent.json"), "utf8")) as {
        host_id: string;
      };
      expect(config.host_id).toBe(old.hostId);
      stack.agents.push(startAgent(["run"], dirs, old.env));
      await waitHostReady(stack.api, old.hostId);

      const { host } = await stack.api.get<{ host: { name: string } }>(`/api/hosts/${old.hostId}`);
      expect(host.name).toBe(name);
      const { labels } = await stack.api.get<{ labels: Record<string, string> }>(
        `/api/hosts/${old.hostId}/labels`,
      );
      expect(labels).toEqual({ role: "db" });
      const groups = await stack.api.get<{ source_groups: Array<{ name: string }> }>(
        `/api/hosts/${old.hostId}/source-groups`,
      );
      expect(groups.source_groups.map((g) => g.name)).toContain("data");

      // The old machine's token opens nothing any more.
      const refused = await fetch(`${stack.api.baseUrl}/api/agents/release-key`, {
        headers: { Authorization: `Bearer ${oldToken}` },
      });
      expect(refused.status).toBe(401);

      // One action brings every group back in place from its newest snapshot: the old machine's.
      const recovery = await stack.api.send<{
        started: Array<{ group: string; snapshot_id: string; job_id: string }>;
        skipped: Array<{ group: string }>;
      }>("POST", `/api/hosts/${old.hostId}/recover`, { in_place: true, confirm_hostname: name });
      expect(recovery.status, JSON.stringify(recovery.body)).toBe(201);
      expect(recovery.body.started.map((s) => [s.group, s.snapshot_id])).toEqual([["data", first.id]]);
      const recovered = await waitJob(recovery.body.started[0]?.job_id ?? "");
      expect(recovered.status, recovered.error ?? "").toBe("succeeded");
      expect(readFileSync(file).equals(original)).toBe(true);
      expect(lstatSync(file).mode & 0o7777).toBe(0o600);

      // The new machine's first backup lists the old snapshot beside its own: one history.
      writeFileSync(file, "written on the new machine\n");
      await runGroup();
      const both = await eventually(
        async () => {
          const { snapshots } = await stack.api.get<Snapshots>(`/api/hosts/${old.hostId}/snapshots`);
          return snapshots.length === 2 && snapshots.some((s) => s.id === first.id) ? snapshots : undefined;
        },
        { what: "the old and the new snapshot in one list" },
      );
      expect(new Set(both.map((s) => s.hostname)).size).toBe(1);
      // And the repository itself, read with the restic CLI rather than our own records: both
      // snapshots, one hostname.
      const url = new URL(stack.rest.url);
      const listed = JSON.parse(
        execFileSync(RESTIC[restic], ["--no-cache", "snapshots", "--json", "--no-lock"], {
          encoding: "utf8",
          env: {
            PATH: process.env.PATH ?? "",
            RESTIC_REPOSITORY: `rest:${url.protocol}//successor-${restic.replace(".", "")}:${encodeURIComponent(old.loginPassword)}@${url.host}/successor-${restic.replace(".", "")}/`,
            RESTIC_PASSWORD: old.password,
          },
        }),
      ) as Array<{ id: string; hostname: string }>;
      expect(listed.map((snapshot) => snapshot.id).sort()).toEqual(
        both.map((snapshot) => snapshot.id).sort(),
      );
      expect(new Set(listed.map((snapshot) => snapshot.hostname))).toEqual(
        new Set(both.map((s) => s.hostname)),
      );

      // And the old snapshot still restores by id after the new one, beside the files.
      const target = mkdtempSync(join(tmpdir(), "fleetback-successor-to-"));
      const restore = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${old.hostId}/restore`, {
        snapshot_id: first.id,
        paths: [file],
        in_place: false,
        target_dir: target,
      });
      expect(restore.status, JSON.stringify(restore.body)).toBe(201);
      const restored = await waitJob(restore.body.job_id);
      expect(restored.status, restored.error ?? "").toBe("succeeded");
      const copy = join(target, file);
      expect(readFileSync(copy).equals(original)).toBe(true);
      expect(lstatSync(copy).mode & 0o7777).toBe(0o600);

      const audit = await stack.api.get<{ entries: Array<{ action: string; target_id: string | null }> }>(
        "/api/audit?action=host.replace",
      );
      // One takeover of this host (the stack is shared by both versions' tests).
      expect(
        audit.entries.filter((e) => e.action === "host.replace" && e.target_id === old.hostId),
      ).toHaveLength(1);
    });
  }
});

/**
 * Issue 38 end to end with real processes (restic 0.18 and 0.14, rest-server, two real agents):
 * a file backed up on host A is restored onto host B through `POST /api/hosts/{B}/restore` with
 * `from_host_id` A, to a new directory and in place (confirmed with B's name). It comes back
 * byte-identical with its mode, the job, the audit entry and the
 * job page name both hosts, and afterwards nothing in B's config and state directories holds A's
 * repository password or rest-server login: B was given them for that one job, in memory.
 */
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAgent } from "./support/agent-process.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { useStack, waitJob as waitJobOf } from "./support/stack.js";
import { FETCHED_TOOLS, missingNote, toolsPresent } from "./support/tools.js";

interface JobJson {
  id: string;
  host_id: string;
  status: string;
  error: string | null;
  params: Record<string, unknown>;
}

/** Every file below `dir` whose bytes hold any of `needles`. */
function filesHolding(dir: string, needles: readonly string[]): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).flatMap((entry) => {
    if (!entry.isFile()) {
      return [];
    }
    const path = join(entry.parentPath, entry.name);
    const bytes = readFileSync(path);
    return needles.some((needle) => bytes.includes(needle)) ? [path] : [];
  });
}

const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`restore onto another host against rest-server${missing}`, () => {
  const stack = useStack();
  const waitJob = (jobId: string) => waitJobOf<JobJson>(stack.api, jobId);

  for (const restic of ["0.18", "0.14"] as const) {
    it(`restic ${restic}: A's file comes back on B byte-identical with its mode, and B keeps nothing of A's credentials`, async () => {
      const tag = restic.replace(".", "");
      const a = await enrolHost({ api: stack.api, rest: stack.rest, restic, user: `xa-${tag}` });
      const b = await enrolHost({ api: stack.api, rest: stack.rest, restic, user: `xb-${tag}` });
      stack.agents.push(startAgent(["run"], a.dirs, a.env));
      stack.agents.push(startAgent(["run"], b.dirs, b.env));
      await waitHostReady(stack.api, a.hostId);
      await waitHostReady(stack.api, b.hostId);
      // Two agents on one machine enrol under the same hostname: the names tell them apart here.
      for (const [id, name] of [
        [a.hostId, `site-a-${tag}`],
        [b.hostId, `site-b-${tag}`],
      ] as const) {
        const renamed = await stack.api.send("PATCH", `/api/hosts/${id}`, { name });
        expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
      }

      const source = mkdtempSync(join(tmpdir(), "fleetback-cross-src-"));
      mkdirSync(join(source, "etc"));
      const file = join(source, "etc", "app.conf");
      writeFileSync(file, Buffer.from(Array.from({ length: 90_000 }, (_, i) => (i * 31) % 251)));
      chmodSync(file, 0o640);
      const group = await stack.api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${a.hostId}/source-groups`,
        { name: "conf", includes: [source] },
      );
      expect(group.status, JSON.stringify(group.body)).toBe(201);
      const run = await stack.api.send<{ job_id: string }>(
        "POST",
        `/api/hosts/${a.hostId}/source-groups/${group.body.source_group.id}/run`,
      );
      expect(run.status, JSON.stringify(run.body)).toBe(201);
      const backup = await waitJob(run.body.job_id);
      expect(backup.status, backup.error ?? "").toBe("succeeded");
      const snapshot = await eventually(
        async () =>
          (await stack.api.get<{ snapshots: Array<{ id: string }> }>(`/api/hosts/${a.hostId}/snapshots`))
            .snapshots[0],
        { what: "A's snapshot in the cache" },
      );

      // A snapshot of A is not one of B's: without from_host_id B's own list is looked in.
      const own = await stack.api.send("POST", `/api/hosts/${b.hostId}/restore`, {
        snapshot_id: snapshot.id,
        paths: [file],
        in_place: false,
      });
      expect(own.status).toBe(400);

      const target = mkdtempSync(join(tmpdir(), "fleetback-cross-to-"));
      const restore = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${b.hostId}/restore`, {
        snapshot_id: snapshot.id,
        paths: [file],
        in_place: false,
        target_dir: target,
        from_host_id: a.hostId,
      });
      expect(restore.status, JSON.stringify(restore.body)).toBe(201);
      const restored = await waitJob(restore.body.job_id);
      expect(restored.status, restored.error ?? "").toBe("succeeded");
      const copy = join(target, file);
      expect(readFileSync(copy).equals(readFileSync(file))).toBe(true);
      expect(lstatSync(copy).mode & 0o7777).toBe(0o640);

      const [aName, bName] = await Promise.all(
        [a.hostId, b.hostId].map(
          async (id) => (await stack.api.get<{ host: { name: string } }>(`/api/hosts/${id}`)).host.name,
        ),
      );
      expect(restored.host_id).toBe(b.hostId);
      expect(restored.params).toMatchObject({ from_host_id: a.hostId, from_host_name: aName });
      const page = await stack.api.text(`/jobs/${restored.id}`);
      expect(page).toContain('data-testid="job-restore-from"');
      expect(page).toContain(`>${aName}</a> onto <a href="/hosts/${b.hostId}">${bName}</a>`);
      const audit = await stack.api.get<{
        entries: Array<{ action: string; details: Record<string, unknown> }>;
      }>("/api/audit?action=host.restore");
      const entry = audit.entries.find(
        (row) => row.action === "host.restore" && row.details.job_id === restored.id,
      );
      expect(entry?.details.summary).toBe(`restore of ${aName}'s snapshot onto ${bName}`);

      // In place on B (here the same machine, so A's own path): confirmed with B's name, not A's.
      const original = readFileSync(file);
      writeFileSync(file, "changed after the backup\n");
      const wrongName = await stack.api.send("POST", `/api/hosts/${b.hostId}/restore`, {
        snapshot_id: snapshot.id,
        paths: [file],
        in_place: true,
        confirm_hostname: aName,
        from_host_id: a.hostId,
      });
      expect(wrongName.status).toBe(400);
      const inPlace = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${b.hostId}/restore`, {
        snapshot_id: snapshot.id,
        paths: [file],
        in_place: true,
        confirm_hostname: bName,
        from_host_id: a.hostId,
      });
      expect(inPlace.status, JSON.stringify(inPlace.body)).toBe(201);
      const back = await waitJob(inPlace.body.job_id);
      expect(back.status, back.error ?? "").toBe("succeeded");
      expect(readFileSync(file).equals(original)).toBe(true);
      expect(lstatSync(file).mode & 0o7777).toBe(0o640);

      // B was given A's credentials for the job alone: nothing of them is left on its disk.
      const secrets = [...new Set([a.password, a.loginPassword])];
      expect(filesHolding(b.dirs.configDir, secrets)).toEqual([]);
      expect(filesHolding(b.dirs.stateDir, secrets)).toEqual([]);
    });
  }
});

/**
 * Issue 6 end to end with real processes (restic 0.18 and 0.14, rest-server): a tree with
 * owners, modes, a symlink and names with spaces and unicode is backed up; one subfolder is
 * restored to a new directory and compared byte for byte and mode for mode; an in-place restore
 * brings back one changed file; the wizard's tree API lists a snapshot's folders; a diff job of
 * two snapshots reports the changed file.
 */
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
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
  status: string;
  error: string | null;
  summary: Record<string, unknown> | null;
}
interface SnapshotJson {
  id: string;
  short_id: string;
  tags: string[];
}

const FILES: Array<{ path: string; body: string; mode: number; uid: number; gid: number }> = [
  { path: "docs/plain.txt", body: "plain text\n", mode: 0o644, uid: 0, gid: 0 },
  { path: "docs/with space ünïcødé.txt", body: "spaces and unicode\n", mode: 0o600, uid: 1234, gid: 2345 },
  { path: "docs/run.sh", body: "#!/bin/sh\necho hi\n", mode: 0o750, uid: 1234, gid: 0 },
  { path: "docs/nested/deep.bin", body: "x".repeat(70_000), mode: 0o640, uid: 0, gid: 2345 },
  { path: "other/keep.txt", body: "not restored\n", mode: 0o644, uid: 0, gid: 0 },
];

function buildTree(): string {
  const root = mkdtempSync(join(tmpdir(), "fleetback-restore-src-"));
  for (const file of FILES) {
    const path = join(root, file.path);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, file.body);
    chmodSync(path, file.mode);
    chownSync(path, file.uid, file.gid);
  }
  symlinkSync("plain.txt", join(root, "docs", "link to plain"));
  return root;
}

const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent(), root: process.getuid?.() === 0 });
describe.skipIf(missing !== "")(`restore and diff against rest-server${missing}`, () => {
  const stack = useStack();

  const waitJob = (jobId: string) => waitJobOf<JobJson>(stack.api, jobId);

  async function backup(hostId: string, groupId: string): Promise<void> {
    const res = await stack.api.send<{ job_id: string }>(
      "POST",
      `/api/hosts/${hostId}/source-groups/${groupId}/run`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const job = await waitJob(res.body.job_id);
    expect(job.status, job.error ?? "").toBe("succeeded");
  }

  for (const restic of ["0.18", "0.14"] as const) {
    it(`restic ${restic}: new-directory and in-place restores keep bytes, modes and owners; tree and diff work`, async () => {
      const host = await enrolHost({
        api: stack.api,
        rest: stack.rest,
        restic,
        user: `rs-${restic.replace(".", "")}`,
      });
      stack.agents.push(startAgent(["run"], host.dirs, host.env));
      await waitHostReady(stack.api, host.hostId);
      const source = buildTree();
      const created = await stack.api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${host.hostId}/source-groups`,
        { name: "tree", includes: [source] },
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const groupId = created.body.source_group.id;
      await backup(host.hostId, groupId);
      const first = await eventually(
        async () =>
          (await stack.api.get<{ snapshots: SnapshotJson[] }>(`/api/hosts/${host.hostId}/snapshots`))
            .snapshots[0],
        { what: "the snapshot in the cache" },
      );

      // The wizard's tree: the docs folder's direct children.
      const tree = await stack.api.get<{ entries: Array<{ name: string; type: string }> }>(
        `/api/hosts/${host.hostId}/tree?snapshot_id=${first.id}&path=${encodeURIComponent(join(source, "docs"))}`,
      );
      expect(tree.entries.map((entry) => [entry.name, entry.type]).sort()).toEqual(
        [
          ["link to plain", "symlink"],
          ["nested", "dir"],
          ["plain.txt", "file"],
          ["run.sh", "file"],
          ["with space ünïcødé.txt", "file"],
        ].sort(),
      );

      // New directory: only docs/ comes back, under the target, with bytes, modes and owners.
      const target = mkdtempSync(join(tmpdir(), "fleetback-restore-to-"));
      const restore = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${host.hostId}/restore`, {
        snapshot_id: first.id,
        paths: [join(source, "docs")],
        in_place: false,
        target_dir: target,
      });
      expect(restore.status, JSON.stringify(restore.body)).toBe(201);
      const restored = await waitJob(restore.body.job_id);
      expect(restored.status, restored.error ?? "").toBe("succeeded");
      for (const file of FILES) {
        const path = join(target, source, file.path);
        if (file.path.startsWith("other/")) {
          expect(() => lstatSync(path)).toThrow();
          continue;
        }
        expect(readFileSync(path, "utf8"), file.path).toBe(file.body);
        const stat = lstatSync(path);
        expect(stat.mode & 0o7777, file.path).toBe(file.mode);
        expect([stat.uid, stat.gid], file.path).toEqual([file.uid, file.gid]);
      }
      expect(readlinkSync(join(target, source, "docs", "link to plain"))).toBe("plain.txt");

      // In place: a changed file gets its backed-up content back.
      const changed = join(source, "docs", "plain.txt");
      writeFileSync(changed, "changed after the backup\n");
      const confirm = (await stack.api.get<{ host: { name: string } }>(`/api/hosts/${host.hostId}`)).host
        .name;
      const inPlace = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${host.hostId}/restore`, {
        snapshot_id: first.id,
        paths: [changed],
        in_place: true,
        confirm_hostname: confirm,
      });
      expect(inPlace.status, JSON.stringify(inPlace.body)).toBe(201);
      const back = await waitJob(inPlace.body.job_id);
      expect(back.status, back.error ?? "").toBe("succeeded");
      expect(readFileSync(changed, "utf8")).toBe("plain text\n");

      // Diff: a second snapshot with one changed file.
      writeFileSync(join(source, "other", "keep.txt"), "now different\n");
      await backup(host.hostId, groupId);
      const both = await eventually(
        async () => {
          const { snapshots } = await stack.api.get<{ snapshots: SnapshotJson[] }>(
            `/api/hosts/${host.hostId}/snapshots`,
          );
          return snapshots.length >= 2 ? snapshots : undefined;
        },
        { what: "two snapshots" },
      );
      const diff = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${host.hostId}/diff`, {
        snapshot_a: both[1]?.id,
        snapshot_b: both[0]?.id,
      });
      expect(diff.status, JSON.stringify(diff.body)).toBe(201);
      const diffed = await waitJob(diff.body.job_id);
      expect(diffed.status, diffed.error ?? "").toBe("succeeded");
      const logs = await stack.api.get<{ lines: Array<{ line: string }> }>(`/api/jobs/${diffed.id}/logs`);
      expect(logs.lines.some((entry) => entry.line.includes("other/keep.txt"))).toBe(true);
      const page = await stack.api.text(`/jobs/${diffed.id}`);
      expect(page).toContain("keep.txt");
    });
  }
});

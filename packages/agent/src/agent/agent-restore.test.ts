/**
 * Restore, diff and tree browsing through a real agent on a real socket, with real restic 0.18
 * and 0.14 against a local repository in a temp dir: a tree with owners, modes, a symlink and
 * names with spaces, unicode and glob characters is backed up, a subfolder is restored to a new
 * directory and compared byte for byte, mode for mode and owner for owner, one changed file is
 * restored in place, tree.list answers directly and then from the index, and diff reports what
 * changed between two snapshots.
 */
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  backupCommand,
  finishedOf,
  type Harness,
  initTempRepository,
  logLines,
  nextUlid,
  restoreCommand,
  runJob,
  startHarness,
  treeList,
} from "../testing/agent-harness.js";
import { useTestServer } from "../testing/test-server.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";

const PASSWORD = "restore-test-pw";
const isRoot = process.getuid?.() === 0;

const server = useTestServer();

async function sourceTree(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "fleetback-restore-src-"));
  const sub = join(root, "projects", "ü nicode dir");
  await mkdir(join(sub, "inner"), { recursive: true });
  await writeFile(join(sub, "file with spaces.txt"), "spaces and ünïcödé\n");
  await writeFile(join(sub, "a[1].txt"), "glob characters\n");
  await writeFile(join(sub, "a1.txt"), "the file a[1] must not select\n");
  await writeFile(join(sub, "secret.key"), Buffer.alloc(70_000, 3));
  await writeFile(join(sub, "inner", "run.sh"), "#!/bin/sh\necho hi\n");
  await chmod(join(sub, "secret.key"), 0o600);
  await chmod(join(sub, "inner", "run.sh"), 0o750);
  await chmod(join(sub, "inner"), 0o710);
  await symlink("inner/run.sh", join(sub, "link to run"));
  if (isRoot) {
    await chown(join(sub, "secret.key"), 1234, 5678);
  }
  await writeFile(join(root, "top.txt"), "top level\n");
  return root;
}

interface NodeInfo {
  type: string;
  mode: number;
  uid: number;
  gid: number;
  content: string;
}

/** Every node below `dir`, keyed by relative path: type, permission bits, owner and content. */
async function snapshotOf(dir: string, prefix = ""): Promise<Record<string, NodeInfo>> {
  const result: Record<string, NodeInfo> = {};
  for (const name of (await readdir(dir)).sort()) {
    const path = join(dir, name);
    const info = await lstat(path);
    const key = `${prefix}${name}`;
    const type = info.isSymbolicLink() ? "symlink" : info.isDirectory() ? "dir" : "file";
    const content =
      type === "symlink"
        ? await readlink(path)
        : type === "file"
          ? (await readFile(path)).toString("base64")
          : "";
    result[key] = { type, mode: info.mode & 0o7777, uid: info.uid, gid: info.gid, content };
    if (type === "dir") {
      Object.assign(result, await snapshotOf(path, `${key}/`));
    }
  }
  return result;
}

async function backup(harness: Harness, tree: string): Promise<string> {
  const reports = await runJob(harness, backupCommand([tree], { tag: "restore-test" }));
  const finished = finishedOf(reports);
  expect(finished).toMatchObject({ status: "succeeded" });
  return String(finished?.summary?.snapshot_id);
}

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";

  it.skipIf(restic === "")(
    `restores to a new directory and in place, browses the tree and diffs${resticNote(version)}`,
    async () => {
      const home = await mkdtemp(join(tmpdir(), "fleetback-home-"));
      const harness = await startHarness(server(), {
        resticCommand: restic,
        parentEnv: { ...process.env, HOME: home },
      });
      try {
        await initTempRepository(harness, PASSWORD);
        const tree = await sourceTree();
        const first = await backup(harness, tree);
        const sub = join(tree, "projects", "ü nicode dir");

        // New directory: $HOME expanded, the subfolder comes back byte, mode and owner identical.
        const toNewDir = restoreCommand(first, [sub]);
        const restored = await runJob(harness, toNewDir);
        expect(finishedOf(restored)).toMatchObject({ status: "succeeded", exit_code: 0 });
        const target = join(home, "fleetback-restore", toNewDir.job_id);
        expect(await snapshotOf(join(target, sub))).toEqual(await snapshotOf(sub));
        await expect(lstat(join(target, tree, "top.txt"))).rejects.toThrow();
        if (isRoot) {
          expect((await lstat(join(target, sub, "secret.key"))).uid).toBe(1234);
        }
        const restoreCall = harness.calls.find(
          (call) => call.args.includes("restore") && call.args.includes("--target"),
        );
        expect(restoreCall?.args).not.toContain("--no-ownership");
        expect(logLines(restored)).toContain(
          `agent: ownership is restored as recorded in the snapshot: restic ${version}.0 offers no --no-ownership`,
        );
        expect(logLines(restored).some((line) => line.includes('"message_type":"status"'))).toBe(false);
        expect(restored.some((message) => message.type === "job.progress")).toBe(true);
        if (version === "0.18") {
          expect(finishedOf(restored)?.summary).toMatchObject({ total_files: expect.any(Number) });
        }

        // In place: one changed file comes back, its neighbour (changed too, not selected) does not.
        const changed = join(sub, "file with spaces.txt");
        await writeFile(changed, "overwritten by accident\n");
        await writeFile(join(sub, "a1.txt"), "changed after the backup\n");
        const inPlace = await runJob(
          harness,
          restoreCommand(first, [changed], { in_place: true, target_dir: "/" }),
        );
        expect(finishedOf(inPlace)).toMatchObject({ status: "succeeded" });
        expect(await readFile(changed, "utf8")).toBe("spaces and ünïcödé\n");
        expect(await readFile(join(sub, "a1.txt"), "utf8")).toBe("changed after the backup\n");

        // tree.list: the first answer lists directly, later ones come from the index.
        const root = await treeList(harness, first, "/");
        expect(root.entries?.map((entry) => entry.name)).toContain(tree.split("/")[1]);
        await harness.agent.tree.idle();
        const lsCalls = () => harness.calls.filter((call) => call.args.includes("ls")).length;
        const callsAfterIndex = lsCalls();
        expect(callsAfterIndex).toBe(2);
        const listed = await treeList(harness, first, `${sub}/inner/..`);
        expect(listed.entries?.map((entry) => [entry.name, entry.type])).toEqual([
          ["a1.txt", "file"],
          ["a[1].txt", "file"],
          ["file with spaces.txt", "file"],
          ["inner", "dir"],
          ["link to run", "symlink"],
          ["secret.key", "file"],
        ]);
        expect(listed.entries?.find((entry) => entry.name === "secret.key")).toMatchObject({
          path: join(sub, "secret.key"),
          size: 70_000,
          mtime: expect.stringMatching(/Z$/),
        });
        expect((await treeList(harness, first, tree)).entries?.map((entry) => entry.name)).toEqual([
          "projects",
          "top.txt",
        ]);
        expect(await treeList(harness, first, `${tree}/top.txt`)).toEqual({
          error: `not a directory: ${tree}/top.txt`,
        });
        expect(lsCalls()).toBe(callsAfterIndex);
        const missing = await treeList(harness, "deadbeef", "/");
        expect(missing.error).toMatch(/no matching ID found for prefix "deadbeef"/);

        // diff: a new, a removed and a changed file.
        await writeFile(join(tree, "new.txt"), "new file\n");
        await rm(join(tree, "top.txt"));
        const second = await backup(harness, tree);
        const diff = await runJob(harness, {
          job_id: nextUlid(),
          kind: "diff",
          requires_admin_creds: false,
          diff: { snapshot_a: first, snapshot_b: second },
        });
        expect(finishedOf(diff)).toMatchObject({
          status: "succeeded",
          summary: {
            changes: { added: 1, removed: 1, modified: 1 },
            added: { files: 1 },
            removed: { files: 1 },
          },
        });
        const changes = logLines(diff)
          .filter((line) => line.startsWith("stdout: {"))
          .map((line) => JSON.parse(line.slice("stdout: ".length)) as Record<string, unknown>)
          .filter((line) => line.message_type === "change");
        expect(changes).toEqual(
          expect.arrayContaining([
            { message_type: "change", path: join(tree, "new.txt"), modifier: "+" },
            { message_type: "change", path: join(tree, "top.txt"), modifier: "-" },
            { message_type: "change", path: join(sub, "a1.txt"), modifier: "M" },
          ]),
        );
      } finally {
        await harness.stop();
      }
    },
    120_000,
  );
});

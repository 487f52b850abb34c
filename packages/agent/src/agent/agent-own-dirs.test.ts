/**
 * The agent's own directories are never data (issue 33), through a real agent on a real socket
 * with real restic 0.18 and 0.14: the hello names them; a backup of a folder above the config dir
 * leaves it out (its name holds glob characters, and its sibling whose name the unescaped glob
 * would match stays in); and with a snapshot taken without the exclude (as before this change),
 * the tree listing refuses the config dir and leaves its entry out of its parent, a download of
 * it or of a folder holding it is refused, and a restore of a folder holding it brings back
 * everything around it but not the token.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
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

const PASSWORD = "own-dirs-test-pw";
const TOKEN = '{"agent_token":"fa_never-data"}\n';

const server = useTestServer();

/** `<root>/etc/agent[1]` (the config dir, with the token), its siblings `agent1` and `nginx`, and `srv`. */
async function hostTree(): Promise<{ root: string; etc: string; config: string }> {
  const root = await mkdtemp(join(tmpdir(), "fleetback-own-dirs-"));
  const etc = join(root, "etc");
  const config = join(etc, "agent[1]");
  await mkdir(config, { recursive: true });
  await writeFile(join(config, "agent.json"), TOKEN);
  await mkdir(join(etc, "agent1"));
  await writeFile(join(etc, "agent1", "keep.txt"), "a sibling\n");
  await mkdir(join(etc, "nginx"));
  await writeFile(join(etc, "nginx", "nginx.conf"), "server {}\n");
  await mkdir(join(root, "srv"));
  await writeFile(join(root, "srv", "data.txt"), "data\n");
  return { root, etc, config };
}

/** Sends a dump.request, acknowledges every chunk, and returns the bytes and the end. */
async function download(harness: Harness, snapshot_id: string, path: string, archive?: "tar") {
  const requestId = nextUlid();
  harness.peer.send("dump.request", {
    request_id: requestId,
    snapshot_id,
    path,
    max_bytes: 1024 * 1024 * 1024,
    ...(archive === undefined ? {} : { archive }),
  });
  const parts: Buffer[] = [];
  let index = 0;
  for (;;) {
    const frames = await harness.peer.until(() => {
      const seen = harness.peer.received.filter(
        (message) =>
          (message.type === "dump.chunk" || message.type === "dump.end") &&
          message.payload.request_id === requestId,
      );
      return seen.length > index ? seen : undefined;
    }, 60_000);
    for (; index < frames.length; index++) {
      const message = frames[index];
      if (message?.type === "dump.chunk") {
        parts.push(Buffer.from(message.payload.data, "base64"));
        harness.peer.send("dump.ack", { request_id: requestId, seq: message.payload.seq });
      } else if (message?.type === "dump.end") {
        return { data: Buffer.concat(parts), end: message.payload };
      }
    }
  }
}

/** Every path restic lists in `snapshot`, straight from the repository. */
function resticLs(restic: string, repo: string, snapshot: string): string[] {
  const env = { ...process.env, RESTIC_REPOSITORY: repo, RESTIC_PASSWORD: PASSWORD };
  return execFileSync(restic, ["ls", "--no-lock", "--no-cache", "--json", snapshot], {
    env,
    encoding: "utf8",
  })
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { path?: string; struct_type?: string })
    .flatMap((node) => (node.struct_type === "node" && node.path !== undefined ? [node.path] : []));
}

/** A snapshot of `root` made by restic itself, without the agent's excludes: one from before issue 33. */
function oldSnapshot(restic: string, repo: string, root: string): string {
  const env = { ...process.env, RESTIC_REPOSITORY: repo, RESTIC_PASSWORD: PASSWORD };
  execFileSync(restic, ["backup", "--no-cache", "--tag", "old", root], { env, encoding: "utf8" });
  const listed = JSON.parse(
    execFileSync(restic, ["snapshots", "--no-lock", "--no-cache", "--json", "--tag", "old"], {
      env,
      encoding: "utf8",
    }),
  ) as { id: string }[];
  return listed[0]?.id ?? "";
}

async function filesBelow(dir: string, prefix = ""): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = `${prefix}${entry.name}`;
    found.push(...(entry.isDirectory() ? await filesBelow(join(dir, entry.name), `${path}/`) : [path]));
  }
  return found.sort();
}

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";

  it.skipIf(restic === "")(
    `keeps the agent's own directories out of backups, listings, downloads and restores${resticNote(version)}`,
    async () => {
      const { root, etc, config } = await hostTree();
      const home = await mkdtemp(join(tmpdir(), "fleetback-own-dirs-home-"));
      const harness = await startHarness(server(), {
        resticCommand: restic,
        configDir: config,
        parentEnv: { ...process.env, HOME: home },
      });
      try {
        const hello = harness.peer.received.find((message) => message.type === "hello");
        expect(hello?.type === "hello" && hello.payload.agent_dirs).toEqual([harness.stateDir, config]);

        const repo = await initTempRepository(harness, PASSWORD, "fleetback-own-dirs-repo-");
        const old = oldSnapshot(restic, repo, root);
        expect(resticLs(restic, repo, old)).toContain(join(config, "agent.json"));

        // A backup of the folder above the config dir: everything but the config dir.
        const backup = await runJob(harness, backupCommand([root], { tag: "etc" }));
        expect(finishedOf(backup)).toMatchObject({ status: "succeeded" });
        expect(logLines(backup)).toContain(
          `agent: the agent's own directories are never backed up: ${harness.stateDir}, ${config}`,
        );
        const fresh = String(finishedOf(backup)?.summary?.snapshot_id);
        const backedUp = resticLs(restic, repo, fresh);
        expect(backedUp).toContain(join(etc, "agent1", "keep.txt"));
        expect(backedUp).toContain(join(etc, "nginx", "nginx.conf"));
        expect(backedUp.filter((path) => path.startsWith(config))).toEqual([]);

        // The tree: the config dir is refused, and its parent lists everything else.
        expect(await treeList(harness, old, config)).toEqual({
          error: `${config} is the agent's own directory ${config} or lies inside it; its files are never listed`,
        });
        expect((await treeList(harness, old, etc)).entries?.map((entry) => entry.name)).toEqual([
          "agent1",
          "nginx",
        ]);

        // Downloads: the token and the folders holding it are refused; folders around it are not.
        const token = await download(harness, old, join(config, "agent.json"));
        expect(token.end).toMatchObject({ status: "failed", bytes: 0 });
        expect(token.end.error).toBe(
          `${join(config, "agent.json")} is the agent's own directory ${config} or lies inside it; its files are never downloaded`,
        );
        for (const above of [etc, root]) {
          const refused = await download(harness, old, above, "tar");
          expect(refused.end, above).toMatchObject({ status: "failed", bytes: 0 });
          expect(refused.end.error, above).toBe(
            `${above} holds the agent's own directory ${config} in this snapshot, whose files are never downloaded; pick the paths around it`,
          );
        }
        expect((await download(harness, old, join(etc, "nginx"), "tar")).end.status).toBe("succeeded");
        const freshEtc = await download(harness, fresh, etc, "tar");
        expect(freshEtc.end.status).toBe("succeeded");
        expect(freshEtc.data.includes(Buffer.from("fa_never-data"))).toBe(false);

        // A restore of the folder above it, to a new directory: all around it, not the token.
        const restored = await runJob(harness, restoreCommand(old, [etc], { target_dir: "$HOME/restored" }));
        expect(finishedOf(restored)).toMatchObject({ status: "succeeded" });
        expect(logLines(restored)).toContain(
          `agent: left out: the agent's own directory ${config}, which this snapshot holds; restoring the 2 path(s) around it`,
        );
        const target = join(home, "restored");
        expect(await filesBelow(join(target, etc))).toEqual(["agent1/keep.txt", "nginx/nginx.conf"]);
        expect(await readFile(join(target, etc, "nginx", "nginx.conf"), "utf8")).toBe("server {}\n");
        const direct = await runJob(harness, restoreCommand(old, [config], { target_dir: "$HOME/direct" }));
        expect(finishedOf(direct)).toMatchObject({ status: "failed" });
        expect(finishedOf(direct)?.error).toContain("whose files are never restored");
      } finally {
        await harness.stop();
      }
    },
    180_000,
  );
});

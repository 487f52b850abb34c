/**
 * Downloads (`dump.request`, protocol 7) through a real agent on a real socket with real restic
 * 0.18 and 0.14 against a local repository: a file comes back byte for byte (2.5 MiB, so several
 * chunks and the window), a folder as a tar and as a zip whose listing matches the source, the
 * agent sends no more than DUMP_WINDOW_CHUNKS ahead of the acks, a download over `max_bytes`
 * stops at exactly `max_bytes` with `too_large`, `dump.cancel` ends it `cancelled`, and a path
 * with `..` or outside the snapshot is refused without a single chunk. The password never
 * reaches argv.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AgentEnvelope,
  DUMP_WINDOW_CHUNKS,
  type DumpRequest,
  type PayloadOf,
} from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import {
  backupCommand,
  finishedOf,
  type Harness,
  initRepository,
  nextUlid,
  runJob,
  startHarness,
  tempRepository,
} from "../testing/agent-harness.js";
import { useTestServer } from "../testing/test-server.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";

const PASSWORD = "dump-test-pw";
const BIG = randomBytes(2_500_000);

const server = useTestServer();

async function sourceTree(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "fleetback-dump-src-"));
  await mkdir(join(root, "docs", "inner"), { recursive: true });
  await writeFile(join(root, "docs", "plain.txt"), "plain text\n");
  await writeFile(join(root, "docs", "with space ünï.txt"), "spaces and unicode\n");
  await writeFile(join(root, "docs", "inner", "deep.bin"), Buffer.alloc(10_000, 7));
  await writeFile(join(root, "big.bin"), BIG);
  return root;
}

interface Received {
  data: Buffer;
  chunks: number;
  end: PayloadOf<"dump.end">;
}

/** The dump.chunk and dump.end frames of one download received so far, in order. */
function framesOf(harness: Harness, requestId: string): AgentEnvelope[] {
  return harness.peer.received.filter(
    (message) =>
      (message.type === "dump.chunk" || message.type === "dump.end") &&
      message.payload.request_id === requestId,
  );
}

/** Frames arrive as the agent sends them: each wait is woken by a message, its bound a hang guard. */
const FRAME_WAIT_MS = 60_000;

async function endOf(harness: Harness, requestId: string): Promise<PayloadOf<"dump.end">> {
  return harness.peer.until(
    () => {
      const end = framesOf(harness, requestId).find((message) => message.type === "dump.end");
      return end?.type === "dump.end" ? end.payload : undefined;
    },
    FRAME_WAIT_MS,
    `the dump.end of ${requestId}`,
  );
}

/** Sends a dump.request and reads every chunk of it in order, calling `onChunk` for each, up to its dump.end. */
async function download(
  harness: Harness,
  request: Omit<DumpRequest, "request_id">,
  onChunk?: (seq: number, requestId: string) => void,
): Promise<Received> {
  const requestId = nextUlid();
  harness.peer.send("dump.request", { request_id: requestId, ...request });
  const parts: Buffer[] = [];
  let index = 0;
  for (;;) {
    const frames = await harness.peer.until(
      () => {
        const seen = framesOf(harness, requestId);
        return seen.length > index ? seen : undefined;
      },
      FRAME_WAIT_MS,
      `frame ${index} of download ${requestId}`,
    );
    for (; index < frames.length; index++) {
      const message = frames[index];
      if (message?.type === "dump.chunk") {
        expect(message.payload.seq).toBe(parts.length);
        parts.push(Buffer.from(message.payload.data, "base64"));
        onChunk?.(message.payload.seq, requestId);
      } else if (message?.type === "dump.end") {
        return { data: Buffer.concat(parts), chunks: parts.length, end: message.payload };
      }
    }
  }
}

function acking(harness: Harness) {
  return (seq: number, requestId: string) => harness.peer.send("dump.ack", { request_id: requestId, seq });
}

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";

  it.skipIf(restic === "")(
    `streams files and folders with restic dump${resticNote(version)}`,
    async () => {
      const harness = await startHarness(server(), { resticCommand: restic });
      try {
        const repository = { url: await tempRepository("fleetback-dump-repo-"), password: PASSWORD };
        expect(finishedOf(await initRepository(harness, repository))).toMatchObject({ status: "succeeded" });
        const tree = await sourceTree();
        const backup = await runJob(harness, backupCommand([tree], { tag: "dump-test" }));
        const snapshotId = String(finishedOf(backup)?.summary?.snapshot_id);
        const max = 1024 * 1024 * 1024;

        // A file: byte for byte, in several chunks.
        const file = await download(
          harness,
          { snapshot_id: snapshotId, path: join(tree, "big.bin"), max_bytes: max },
          acking(harness),
        );
        expect(file.end).toMatchObject({ status: "succeeded", bytes: BIG.length });
        expect(file.chunks).toBeGreaterThan(DUMP_WINDOW_CHUNKS);
        expect(file.data.equals(BIG)).toBe(true);
        const dumpCall = harness.calls.find((call) => call.args.includes("dump"));
        expect(dumpCall?.args.join(" ")).not.toContain(PASSWORD);
        expect(dumpCall?.env.RESTIC_PASSWORD).toBe(PASSWORD);

        // A folder: tar by default, zip on request; both list what was backed up.
        const scratch = await mkdtemp(join(tmpdir(), "fleetback-dump-out-"));
        const tar = await download(
          harness,
          { snapshot_id: snapshotId, path: join(tree, "docs"), max_bytes: max },
          acking(harness),
        );
        expect(tar.end.status).toBe("succeeded");
        await writeFile(join(scratch, "docs.tar"), tar.data);
        const tarNames = execFileSync("tar", ["-tf", join(scratch, "docs.tar")], { encoding: "utf8" })
          .split("\n")
          .filter((line) => line !== "" && !line.endsWith("/"));
        expect(tarNames.map((name) => name.replace(/^.*\/docs\//, "docs/")).sort()).toEqual([
          "docs/inner/deep.bin",
          "docs/plain.txt",
          "docs/with space ünï.txt",
        ]);
        const zip = await download(
          harness,
          { snapshot_id: snapshotId, path: join(tree, "docs"), archive: "zip", max_bytes: max },
          acking(harness),
        );
        expect(zip.end.status).toBe("succeeded");
        expect(zip.data.subarray(0, 2).toString()).toBe("PK");
        await writeFile(join(scratch, "docs.zip"), zip.data);
        const zipListing = execFileSync("unzip", ["-Z1", join(scratch, "docs.zip")], { encoding: "utf8" });
        expect(zipListing).toContain("plain.txt");
        expect(zipListing).toContain("inner/deep.bin");

        // Backpressure: without acks the agent stops at the window, and goes on once acked.
        const requestId = nextUlid();
        harness.peer.send("dump.request", {
          request_id: requestId,
          snapshot_id: snapshotId,
          path: join(tree, "big.bin"),
          max_bytes: max,
        });
        const chunksOf = () =>
          harness.peer.received.filter(
            (message) => message.type === "dump.chunk" && message.payload.request_id === requestId,
          ).length;
        await harness.peer.until(() => chunksOf() >= DUMP_WINDOW_CHUNKS || undefined, FRAME_WAIT_MS);
        // No message says "restic has more and the agent holds it back", so a chunk past the window
        // is given a second to show up; a slow machine can only make this pass wrongly, not fail.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect(chunksOf()).toBe(DUMP_WINDOW_CHUNKS);
        harness.peer.send("dump.ack", { request_id: requestId, seq: 0 });
        await harness.peer.until(() => chunksOf() > DUMP_WINDOW_CHUNKS || undefined, FRAME_WAIT_MS);
        expect(chunksOf()).toBe(DUMP_WINDOW_CHUNKS + 1);
        // Cancel: restic stops, the end says so, no further chunk follows.
        harness.peer.send("dump.cancel", { request_id: requestId });
        expect(await endOf(harness, requestId)).toMatchObject({ status: "cancelled" });
        expect(harness.agent.dumps.active).toBe(0);

        // Over the cap: exactly max_bytes are sent, then too_large.
        const capped = await download(
          harness,
          { snapshot_id: snapshotId, path: join(tree, "big.bin"), max_bytes: 300_000 },
          acking(harness),
        );
        expect(capped.end).toMatchObject({ status: "too_large", bytes: 300_000 });
        expect(capped.end.error).toContain("300000");
        expect(capped.data.equals(BIG.subarray(0, 300_000))).toBe(true);

        // Refused paths: `..` before restic runs, a path outside the snapshot by restic.
        const dotted = await download(harness, {
          snapshot_id: snapshotId,
          path: `${tree}/docs/../big.bin`,
          max_bytes: max,
        });
        expect(dotted.end).toMatchObject({ status: "failed", bytes: 0 });
        expect(dotted.end.error).toContain("..");
        expect(dotted.chunks).toBe(0);
        const outside = await download(harness, {
          snapshot_id: snapshotId,
          path: "/etc/passwd",
          max_bytes: max,
        });
        expect(outside.end).toMatchObject({ status: "failed", bytes: 0 });
        expect(outside.chunks).toBe(0);
        expect(outside.end.error ?? "").not.toContain(PASSWORD);
      } finally {
        await harness.stop();
      }
    },
    240_000,
  );
});

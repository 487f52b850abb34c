/**
 * The file catalogue through a real agent on a real socket (protocol 15): real restic backs up a
 * temp tree, the agent indexes the new snapshot and sends `catalog.delta`; once the stand-in
 * server answers `applied`, the next backup's delta holds only what changed since. Two groups
 * backed up back to back (as one schedule does): the first's catalogue is stopped by the second
 * backup, and caught up after it, against the base it had.
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CatalogDelta } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import {
  backupCommand,
  finishedOf,
  initTempRepository,
  runJob,
  startHarness,
} from "../testing/agent-harness.js";
import { useTestServer } from "../testing/test-server.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";
import { catalogStateFile, readCatalogHeader } from "../tree/catalog-state.js";
import { isBelow } from "../tree/tree-path.js";

const server = useTestServer();

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";

  it.skipIf(restic === "")(
    `sends every path after the first backup, then only the change against it${resticNote(version)}`,
    async () => {
      const harness = await startHarness(server(), { resticCommand: restic });
      try {
        await initTempRepository(harness, "catalog-pw");

        const tree = await mkdtemp(join(tmpdir(), "fleetback-src-"));
        await mkdir(join(tree, "sub"));
        const planted = join(tree, "sub", "planted.txt");
        const steady = join(tree, "steady.txt");
        await writeFile(planted, "catalogue me\n");
        await writeFile(steady, "never changes\n");

        expect(finishedOf(await runJob(harness, backupCommand([tree])))?.status).toBe("succeeded");
        const first = (await harness.peer.next("catalog.delta", 60_000)).payload;
        expect(first).toMatchObject({ tag: "docs", base_snapshot_id: null, part: 0, parts: 1, removed: [] });
        const paths = first.changed.map((entry) => entry.path);
        expect(paths).toEqual(expect.arrayContaining([tree, join(tree, "sub"), planted, steady]));
        expect(first.changed.find((entry) => entry.path === planted)).toMatchObject({
          type: "file",
          size: 13,
        });
        harness.peer.send("catalog.ack", { snapshot_id: first.snapshot_id, tag: "docs", status: "applied" });

        await writeFile(planted, "catalogue me again\n");
        expect(finishedOf(await runJob(harness, backupCommand([tree])))?.status).toBe("succeeded");
        const second: CatalogDelta = (await harness.peer.next("catalog.delta", 60_000)).payload;
        expect(second.snapshot_id).not.toBe(first.snapshot_id);
        expect(second).toMatchObject({ tag: "docs", base_snapshot_id: first.snapshot_id, removed: [] });
        expect(second.changed.find((entry) => entry.path === planted)).toMatchObject({
          type: "file",
          size: 19,
        });
        // Only the file and, at most, directories above it (the temp root's mtime moves with other tests).
        for (const entry of second.changed) {
          expect(entry.path === planted || (entry.type === "dir" && isBelow(entry.path, planted))).toBe(true);
        }
        expect(second.changed.some((entry) => entry.path === steady)).toBe(false);
      } finally {
        await harness.stop();
      }
    },
  );
});

// One restic version: the catch-up is the agent's own logic, and four backups take a while.
const NEWEST = resticBinary(RESTIC_VERSIONS[0]) ?? "";

it.skipIf(NEWEST === "")(
  `catches up a group whose catalogue the next group's backup stopped${resticNote(RESTIC_VERSIONS[0])}`,
  async () => {
    const harness = await startHarness(server(), { resticCommand: NEWEST });
    try {
      const repo = await initTempRepository(harness, "catalog-pw");
      const docs = await mkdtemp(join(tmpdir(), "fleetback-docs-"));
      const mail = await mkdtemp(join(tmpdir(), "fleetback-mail-"));
      const changing = join(docs, "changing.txt");
      await writeFile(changing, "one\n");
      await writeFile(join(mail, "inbox"), "hello\n");
      const ack = (delta: CatalogDelta) =>
        harness.peer.send("catalog.ack", {
          snapshot_id: delta.snapshot_id,
          tag: delta.tag,
          status: "applied",
        });

      expect(finishedOf(await runJob(harness, backupCommand([docs])))?.status).toBe("succeeded");
      const docsFirst = (await harness.peer.next("catalog.delta", 60_000)).payload;
      expect(docsFirst).toMatchObject({ tag: "docs", base_snapshot_id: null });
      ack(docsFirst);
      await harness.agent.queue.idle();

      // docs then mail, back to back: mail's arrival stops docs' catalogue before it starts.
      await writeFile(changing, "one, two\n");
      const docsJob = backupCommand([docs]);
      const mailJob = backupCommand([mail], { tag: "mail" });
      harness.peer.send("command.run", docsJob);
      harness.peer.send("command.run", mailJob);
      const mailFirst = (await harness.peer.next("catalog.delta", 120_000)).payload;
      expect(mailFirst).toMatchObject({ tag: "mail", base_snapshot_id: null });
      ack(mailFirst);
      // Then docs catches up: its second snapshot against its first.
      const docsSecond = (await harness.peer.next("catalog.delta", 60_000)).payload;
      expect(docsSecond).toMatchObject({ tag: "docs", base_snapshot_id: docsFirst.snapshot_id });
      expect(docsSecond.changed.find((entry) => entry.path === changing)).toMatchObject({ size: 9 });
      ack(docsSecond);
      await harness.agent.queue.idle();
      const header = await readCatalogHeader(catalogStateFile(harness.stateDir, repo, "docs"), "docs");
      expect(header?.snapshot_id).toBe(docsSecond.snapshot_id);
      // Exactly those three deltas: docs' stopped step sent nothing of its own.
      expect(harness.peer.received.filter((message) => message.type === "catalog.delta")).toHaveLength(3);
    } finally {
      await harness.stop();
    }
  },
);

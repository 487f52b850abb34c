/**
 * @module testing/tree-index
 * For the tests under tree/: tree indexes written by the real writer, and made-up snapshots (one
 * per tag, host and hour, with an id that tells them apart and encodes the hour).
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Snapshot, TreeEntry } from "@fleetback/protocol";
import { createIndexWriter } from "../tree/index-writer.js";

/**
 * Writes `nodes` as a tree index into `dir` (a fresh temp dir when absent) and returns the dir. The
 * nodes go in as given: restic's depth-first order, as a backup's prebuild writes them.
 */
export async function writeIndex(nodes: TreeEntry[], dir?: string): Promise<string> {
  const target = dir ?? (await mkdtemp(join(tmpdir(), "fleetback-index-")));
  const writer = createIndexWriter(target);
  for (const entry of nodes) {
    writer.add(entry);
  }
  writer.finish();
  return target;
}

const TAG_CODES = ["docs", "mail", "logs"];

/**
 * Snapshot `n` of `tag` by `hostname`, n hours into 2026-03-01. Its id starts with the tag's code,
 * the host name's last character and `n` in two digits (characters 2-3), so a test can read `n`
 * back from it.
 */
export function groupSnapshot(n: number, tag = "docs", hostname = "web1"): Snapshot {
  const code = TAG_CODES.indexOf(tag) + 1;
  if (code === 0) {
    throw new Error(`no id code for tag ${tag}; add it to TAG_CODES`);
  }
  const id = `${code}${hostname.slice(-1)}${String(n).padStart(2, "0")}`.padEnd(64, "a");
  return {
    id,
    short_id: id.slice(0, 8),
    time: new Date(Date.UTC(2026, 2, 1, n)).toISOString(),
    hostname,
    paths: ["/srv"],
    tags: [tag],
    size_bytes: 0,
    file_count: 0,
  };
}

/** As restic/snapshots-report.ts hands them: newest first. */
export function newestFirst(snapshots: Snapshot[]): Snapshot[] {
  return [...snapshots].sort((a, b) => Date.parse(b.time) - Date.parse(a.time));
}

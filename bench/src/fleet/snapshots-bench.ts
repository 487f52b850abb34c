/**
 * @module fleet/snapshots-bench
 * Budget B5 of issue 19, its first half: one host reports a repository of 10,000 snapshots (in
 * parts of 1,000, as the agent splits a large list) and the server replaces the host's mirror of
 * them; measured from the first frame sent (encoded beforehand) until the API lists the new count.
 * The baseline is the same host reporting one part of 1,000, so the ratio says how the replacement
 * grows with the list. Then the report that follows a backup: the same 10,000 and one new snapshot.
 */
import { randomBytes } from "node:crypto";
import { encode, newMessageId } from "@fleetback/protocol";
import { pollFetch } from "./poll-fetch.js";
import type { SimAgent } from "./sim-agents.js";

const PART = 1_000;

export type WireSnapshot = ReturnType<typeof snapshot>;

/** `hostname`: the reporting host's own (its agent's hello), so every snapshot counts as its own. */
export function snapshot(i: number, tag: string, hostname: string) {
  const id = randomBytes(32).toString("hex");
  return {
    id,
    short_id: id.slice(0, 8),
    time: new Date(Date.UTC(2020, 0, 1) + i * 3_600_000).toISOString(),
    hostname,
    paths: ["/srv/data", "/etc"],
    tags: [tag],
    size_bytes: 1_000_000 + i,
    file_count: 5_000 + i,
  };
}

/** `count` new snapshots, newest first, tagged `tag`. */
export function snapshotList(count: number, tag: string, hostname: string): WireSnapshot[] {
  return Array.from({ length: count }, (_, i) => snapshot(count - 1 - i, tag, hostname));
}

/** Sends `all` (newest first) as one report; resolves with ms until the API lists it. */
export async function reportSnapshots(
  url: string,
  token: string,
  agent: SimAgent,
  all: WireSnapshot[],
): Promise<number> {
  const count = all.length;
  const newestTag = all[0]?.tags[0] ?? "";
  const parts = Math.max(1, Math.ceil(count / PART));
  const reportId = newMessageId();
  const refreshedAt = new Date().toISOString();
  // Encoded before the clock starts: the agent's serializing is not the server's replacing (it
  // took the bench ~50 ms for 10,000 snapshots, on the same two cores as the server).
  const frames = Array.from({ length: parts }, (_, part) =>
    encode("snapshots.report", {
      snapshots: all.slice(part * PART, (part + 1) * PART),
      refreshed_at: refreshedAt,
      report_id: reportId,
      part,
      parts,
    }),
  );
  const started = performance.now();
  for (const frame of frames) {
    agent.sendFrame(frame);
  }
  const deadline = Date.now() + 120_000;
  for (;;) {
    const res = await pollFetch(`${url}/api/hosts/${agent.host.hostId}/snapshots?limit=1`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const body = (await res.json()) as { total: number | null; snapshots: { tags: string[] }[] };
    if (body.total === count && body.snapshots[0]?.tags.includes(newestTag)) {
      return performance.now() - started;
    }
    if (Date.now() > deadline) {
      throw new Error(`the host still lists ${body.total} snapshots after 120 s, not ${count}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Issue 16 restore drills end to end with real processes: the built server, a real agent and real
 * restic against rest-server. A drill of an intact repository passes and the host page shows it;
 * after bytes in the middle of a data pack are overwritten, the next drill fails with restic's
 * error, opens a `restore_drill_failed` alert, and leaves no scratch directory on the host.
 */
import { randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readdirSync, statSync, writeFileSync, writeSync } from "node:fs";
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

/** The largest pack of the repository: a data pack (tree packs hold only small directory blobs). */
function largestPack(repo: string): string {
  const packs = readdirSync(join(repo, "data")).flatMap((dir) =>
    readdirSync(join(repo, "data", dir)).map((file) => join(repo, "data", dir, file)),
  );
  const [largest] = packs.sort((a, b) => statSync(b).size - statSync(a).size);
  if (largest === undefined) {
    throw new Error(`no pack under ${repo}/data`);
  }
  return largest;
}

function overwriteMiddle(path: string): void {
  const size = statSync(path).size;
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, Math.floor(size / 2) - 2048);
  } finally {
    closeSync(fd);
  }
}

const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`restore drills against rest-server${missing}`, () => {
  const stack = useStack();
  const waitJob = (jobId: string) => waitJobOf<JobJson>(stack.api, jobId);

  async function drill(hostId: string): Promise<JobJson> {
    const res = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${hostId}/jobs`, {
      kind: "drill",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return waitJob(res.body.job_id);
  }

  it("restic 0.18: a drill passes, then fails after a pack is damaged and raises restore_drill_failed", async () => {
    const user = "drill-018";
    const host = await enrolHost({ api: stack.api, rest: stack.rest, restic: "0.18", user });
    stack.agents.push(startAgent(["run"], host.dirs, host.env));
    await waitHostReady(stack.api, host.hostId);

    const source = mkdtempSync(join(tmpdir(), "fleetback-drill-"));
    for (const [name, size] of [
      ["a.bin", 400_000],
      ["b.bin", 300_000],
      ["c.txt", 12],
    ] as const) {
      writeFileSync(join(source, name), randomBytes(size));
    }
    const created = await stack.api.send<{ source_group: { id: string } }>(
      "POST",
      `/api/hosts/${host.hostId}/source-groups`,
      { name: "drilled", includes: [source] },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const run = await stack.api.send<{ job_id: string }>(
      "POST",
      `/api/hosts/${host.hostId}/source-groups/${created.body.source_group.id}/run`,
    );
    expect((await waitJob(run.body.job_id)).status).toBe("succeeded");
    const snapshotId = await eventually(
      async () => {
        const { snapshots } = await stack.api.get<{ snapshots: Array<{ id: string }> }>(
          `/api/hosts/${host.hostId}/snapshots`,
        );
        return snapshots[0]?.id;
      },
      { what: "the snapshot reported" },
    );

    const passed = await drill(host.hostId);
    expect(passed.status, passed.error ?? "").toBe("succeeded");
    expect(passed.summary).toMatchObject({
      snapshot_id: snapshotId,
      files_in_snapshot: 3,
      files_checked: 3,
      bytes_checked: 700_012,
      mismatch_count: 0,
    });
    const page = await stack.api.text(`/hosts/${host.hostId}`);
    expect(page).toContain('<span class="status-succeeded">passed</span>');

    overwriteMiddle(largestPack(join(stack.rest.dataDir, user)));
    const failed = await drill(host.hostId);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/^restic could not restore and verify the sample: /);
    const { alerts } = await stack.api.get<{ alerts: Array<{ kind: string; message: string }> }>(
      `/api/alerts?state=open&host_id=${host.hostId}`,
    );
    expect(alerts).toEqual([
      expect.objectContaining({
        kind: "restore_drill_failed",
        message: `restore drill failed: ${failed.error}`,
      }),
    ]);
    expect(readdirSync(join(host.dirs.stateDir, "drill"))).toEqual([]);
    const after = await stack.api.text(`/hosts/${host.hostId}/maintenance`);
    expect(after).toContain('<span class="status-failed">failed</span>');
  });
});

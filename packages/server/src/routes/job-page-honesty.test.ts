import { hosts } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import type { TestClient } from "../testing/http.js";
import { seedHost, seedJob } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import { seedSystemJob } from "../testing/system-job.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps;
let operator: TestClient;
let hostId: string;

beforeEach(async () => {
  const started = await startSignedInApp({ users: [{ username: "alice", role: "operator" }] });
  deps = started.deps;
  operator = started.users.alice;
  hostId = (await seedHost(deps, { name: "web-1" })).host.id;
});
afterEach(async () => {
  await deps.close();
});

const page = async (id: string) => (await operator.request(`/jobs/${id}`)).text();
const MiB = 1024 * 1024;

/** A restic status line: `share` done, and the files and bytes done of their totals. */
function statusLine(share: number, [filesDone, filesTotal]: number[], [bytesDone, bytesTotal]: number[]) {
  return {
    job_id: "x",
    percent_done: share,
    files_done: filesDone,
    files_total: filesTotal,
    bytes_done: bytesDone,
    bytes_total: bytesTotal,
  };
}

const PART_WAY = statusLine(0.31, [57, 184], [3 * MiB, 10 * MiB]);

describe("a stopped job says how far it got and who stopped it", () => {
  it("names the user who cancelled, the moment, and the files done, with the bar where it stood", async () => {
    const job = await seedSystemJob(deps, hostId, "backup", { progress: PART_WAY });
    expect((await operator.json("POST", `/api/jobs/${job.id}/cancel`)).status).toBe(200);
    const html = await page(job.id);
    expect(html).toMatch(/data-testid="job-stopped">Cancelled by <strong[^>]*>alice<\/strong> at <time/);
    expect(html).toContain('after <span data-testid="job-stopped-after">57 of 184 files</span>');
    expect(html).toMatch(/<progress id="job-progress"[^>]* value="31"/);
    expect(html).toContain("57 of 184");
    expect(html).not.toContain("184 of 184");
  });

  it("says the agent stopped a job when no one asked it to", async () => {
    const job = await seedSystemJob(deps, hostId, "backup", {
      status: "cancelled",
      progress: PART_WAY,
      finishedAt: new Date("2026-11-21T11:42:00Z"),
    });
    expect(await page(job.id)).toMatch(/Cancelled by <strong[^>]*>the agent<\/strong>/);
  });

  it("shows no bar for a restore the host refused before restic ran", async () => {
    const job = await seedSystemJob(deps, hostId, "restore", {
      status: "failed",
      finishedAt: new Date("2026-11-21T11:42:00Z"),
      error: "the target directory /srv/x is not empty; nothing was restored",
      progress: statusLine(1, [184, 184], [3 * MiB, 10 * MiB]),
    });
    const html = await page(job.id);
    expect(html).toContain('data-testid="job-refused"');
    expect(html).toMatch(/id="job-progress-section" hidden|hidden id="job-progress-section"/);
    expect(html).toMatch(
      /Refused by <strong[^>]*>the agent<\/strong>[^<]*<time[\s\S]*?, before it reported any progress/,
    );
  });
});

describe("figures the page shows are the ones restic gave", () => {
  it("takes a succeeded backup's counts from its summary, not restic 0.14's early status line", async () => {
    const job = await seedSystemJob(deps, hostId, "backup", {
      status: "succeeded",
      exitCode: 0,
      progress: statusLine(0, [0, 1], [0, 3]),
      summary: { total_files_processed: 221, total_bytes_processed: 65598, snapshot_id: "dde37704" },
    });
    const html = await page(job.id);
    expect(html).toContain('data-testid="job-files">221 of 221<');
    expect(html).toContain('data-testid="job-bytes">64.1 KiB of 64.1 KiB<');
    expect(html).not.toContain("0 of 1");
  });

  it("takes the counts of a backup that ended before restic printed any status line from its summary", async () => {
    const job = await seedSystemJob(deps, hostId, "backup", {
      status: "succeeded",
      exitCode: 0,
      summary: {
        total_files_processed: 3,
        total_bytes_processed: 3 * 1024 * 1024,
        snapshot_id: "dde37704",
      },
    });
    const html = await page(job.id);
    expect(html).toMatch(
      /<progress id="job-progress" data-testid="job-progress" max="100" value="100" aria-label/,
    );
    expect(html).toContain('data-testid="job-files">3 of 3<');
    expect(html).toContain('data-testid="job-bytes">3.00 MiB of 3.00 MiB<');
  });

  it("shows the done share as unknown until restic reports one, not as 0 %", async () => {
    const job = await seedSystemJob(deps, hostId, "backup", { status: "running" });
    const html = await page(job.id);
    expect(html).toContain(
      '<span id="job-percent" data-testid="job-percent">–</span><span id="job-percent-unit" hidden> %</span>',
    );
    expect(html).toContain('data-testid="job-files">–<');
  });

  it("says 'finishing' only once every byte is read, and shows the rate until then", async () => {
    const job = await seedSystemJob(deps, hostId, "backup", {
      status: "running",
      startedAt: new Date(deps.clock.now().getTime() - 10_000),
      progress: statusLine(0.9996, [57, 184], [10 * MiB, 12 * MiB]),
    });
    const html = await page(job.id);
    expect(html).not.toContain("finishing…");
    expect(html).toContain('data-testid="job-rate">1.00 MiB/s<');
  });
});

describe("a live compare page says nothing its end contradicts", () => {
  it("shows no counts while the diff runs", async () => {
    const job = await seedJob(
      deps,
      {
        hostId,
        kind: "diff",
        actorKind: "system",
        params: { snapshot_a: "a".repeat(64), snapshot_b: "b".repeat(64) },
      },
      { status: "running" },
    );
    const live = await page(job.id);
    expect(live).not.toContain("0 added");
    expect(live).toContain('data-testid="diff-pending"');
  });
});

describe("cancel asks first", () => {
  it("puts the cancel button behind a question that works without script", async () => {
    const job = await seedSystemJob(deps, hostId, "backup", { status: "running" });
    const html = await page(job.id);
    expect(html).toMatch(
      /<details id="job-cancel"[^>]*>\s*<summary[^>]*>Cancel…<\/summary>\s*<form method="post" action="\/jobs\/[0-9A-Z]+\/cancel"[\s\S]*?Yes, cancel the job<\/button>\s*<\/form>\s*<\/details>/,
    );
  });
});

describe("a snapshot's unknown size is shown as unknown", () => {
  it("prints — with the reason for restic before 0.17, and null in the API, never 0", async () => {
    const id = "c".repeat(64);
    await replaceSnapshots(deps.db, hostId, {
      snapshots: [
        {
          id,
          short_id: id.slice(0, 8),
          time: "2026-11-21T10:00:00.000Z",
          hostname: "web-1",
          paths: ["/srv"],
          tags: [],
          // What an agent on restic 0.14 reports: no summary, so 0 and 0.
          size_bytes: 0,
          file_count: 0,
        },
      ],
      refreshed_at: "2026-11-21T10:01:00Z",
    });
    const html = await (await operator.request(`/hosts/${hostId}/snapshots`)).text();
    expect(html).toContain(
      '<td data-label="Size"><span data-testid="snapshot-unknown" title="restic before 0.17 does not report this">—</span></td>',
    );
    expect(html).not.toContain('<td data-label="Size">0 B</td>');
    const api = (await (await operator.request(`/api/hosts/${hostId}/snapshots`)).json()) as {
      snapshots: Array<{ size_bytes: unknown; file_count: unknown }>;
    };
    expect(api.snapshots[0]).toMatchObject({ size_bytes: null, file_count: null });
  });
});

/** restic has read all 6 files; the pack upload is still under way. */
const ALL_READ = statusLine(1, [6, 6], [6 * MiB, 6 * MiB]);

/** The page of a backup that ended just now as `status`, `progress` its last status line. */
async function pageOfEnded(status: "cancelled" | "failed", progress: ReturnType<typeof statusLine>) {
  const job = await seedSystemJob(deps, hostId, "backup", { status, finishedAt: deps.clock.now(), progress });
  return page(job.id);
}

describe("once restic has read everything, the page says what is still true", () => {
  it("a backup cancelled while writing what it read shows no full bar and says it stopped there", async () => {
    const html = await pageOfEnded("cancelled", ALL_READ);
    expect(html).toContain(
      'after <span data-testid="job-stopped-after">reading all 6 files, before restic had written the last of it to the repository</span>',
    );
    expect(html).toMatch(
      /<progress id="job-progress" data-testid="job-progress" max="100" hidden aria-label/,
    );
    expect(html).toContain(
      '<span id="job-percent" data-testid="job-percent">all read, not all written</span><span id="job-percent-unit" hidden> %</span>',
    );
    expect(html).not.toContain('value="100"');
  });

  it("a failed job stopped part-way keeps its bar where it stood", async () => {
    const html = await pageOfEnded("failed", PART_WAY);
    expect(html).toMatch(
      /<progress id="job-progress" data-testid="job-progress" max="100" value="31" aria-label/,
    );
    expect(html).toContain('data-testid="job-stopped-after">57 of 184 files<');
  });

  it("under the backup's own upload cap: uploading, at most the cap, no time left it cannot know", async () => {
    const job = await seedJob(
      deps,
      { hostId, kind: "backup", actorKind: "system", params: { tag: "t", bandwidth_up_kbps: 512 } },
      { status: "running", startedAt: new Date(deps.clock.now().getTime() - 10_000), progress: ALL_READ },
    );
    const html = await page(job.id);
    expect(html).toContain('data-capped-rate="at most 512 KiB/s (the upload cap)"');
    expect(html).toContain('<span id="job-percent" data-testid="job-percent">uploading…</span>');
    expect(html).toContain('data-testid="job-rate">at most 512 KiB/s (the upload cap)<');
    expect(html).toContain(
      'data-testid="job-eta">restic has read everything and is uploading it under the cap; it does not say how much is left<',
    );
    expect(html).not.toContain("finishing…");
  });

  it("under the host's cap alone, which the agent applies when the backup has none", async () => {
    await deps.db.update(hosts).set({ bandwidthUpKbps: 256 }).where(eq(hosts.id, hostId));
    const job = await seedJob(
      deps,
      { hostId, kind: "backup", actorKind: "system", params: { tag: "t" } },
      { status: "running", startedAt: new Date(deps.clock.now().getTime() - 10_000), progress: ALL_READ },
    );
    const html = await page(job.id);
    expect(html).toContain('data-testid="job-rate">at most 256 KiB/s (the upload cap)<');
  });

  it("without a cap: finishing, and no rate from figures that stand still", async () => {
    const job = await seedSystemJob(deps, hostId, "backup", {
      status: "running",
      startedAt: new Date(deps.clock.now().getTime() - 10_000),
      progress: ALL_READ,
    });
    const html = await page(job.id);
    expect(html).toContain('<span id="job-percent" data-testid="job-percent">finishing…</span>');
    expect(html).toContain('data-testid="job-rate">–<');
    expect(html).not.toContain("data-capped-rate");
  });
});

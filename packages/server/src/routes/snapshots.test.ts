import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../app.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { createTestClient, type TestClient } from "../testing/http.js";
import { seedHost, seedJob } from "../testing/seed.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";

const PASSWORD = "correct horse battery";
let deps: TestDeps;
let viewer: TestClient;
let hostId: string;

function snap(index: number, time: string) {
  const id = index.toString(16).padStart(64, "0");
  return {
    id,
    short_id: id.slice(-8),
    time,
    hostname: "web-1",
    paths: ["/srv"],
    tags: ["srv"],
    size_bytes: 3 * 1024 * 1024,
    file_count: 1234,
  };
}

beforeEach(async () => {
  deps = await createTestDeps();
  const app = createApp(deps);
  const admin = createTestClient(app, deps.config.baseUrl);
  viewer = createTestClient(app, deps.config.baseUrl);
  await admin.json("POST", "/api/auth/bootstrap", {
    bootstrap_token: "test-bootstrap-token-0123456789",
    username: "admin",
    password: PASSWORD,
  });
  await admin.json("POST", "/api/users", { username: "looker", password: PASSWORD, role: "viewer" });
  await viewer.json("POST", "/api/auth/login", { username: "looker", password: PASSWORD });
  hostId = (await seedHost(deps)).host.id;
});
afterEach(async () => {
  await deps.close();
});

describe("GET /api/hosts/:id/snapshots", () => {
  it("lists most recent first with refreshed_at and total, paged by next_before", async () => {
    await replaceSnapshots(deps.db, hostId, {
      snapshots: [
        snap(4, "2026-11-20T04:00:00Z"),
        snap(3, "2026-11-20T03:00:00Z"),
        snap(2, "2026-11-20T03:00:00Z"),
        snap(1, "2026-11-20T01:00:00Z"),
      ],
      refreshed_at: "2026-11-21T10:00:00Z",
    });
    const first = await viewer.request(`/api/hosts/${hostId}/snapshots?limit=2`);
    expect(first.status).toBe(200);
    const page1 = (await first.json()) as {
      snapshots: Array<{ id: string; short_id: string; size_bytes: number; file_count: number }>;
      refreshed_at: string;
      total: number;
      next_before: string;
    };
    expect(page1.total).toBe(4);
    expect(page1.refreshed_at).toBe("2026-11-21T10:00:00.000Z");
    expect(page1.snapshots.map((s) => s.id)).toEqual([snap(4, "").id, snap(3, "").id]);
    expect(page1.snapshots[0]).toMatchObject({
      size_bytes: 3 * 1024 * 1024,
      file_count: 1234,
      tags: ["srv"],
    });
    const second = await viewer.request(
      `/api/hosts/${hostId}/snapshots?limit=2&before=${encodeURIComponent(page1.next_before)}`,
    );
    const page2 = (await second.json()) as { snapshots: Array<{ id: string }>; next_before?: string };
    expect(page2.snapshots.map((s) => s.id)).toEqual([snap(2, "").id, snap(1, "").id]);
    const third = await viewer.request(
      `/api/hosts/${hostId}/snapshots?limit=2&before=${encodeURIComponent(page2.next_before ?? "")}`,
    );
    expect(((await third.json()) as { snapshots: unknown[] }).snapshots).toEqual([]);
  });

  it("answers an empty list for a host that never reported, 404 for an unknown host, 400 for a bad cursor", async () => {
    const empty = (await (await viewer.request(`/api/hosts/${hostId}/snapshots`)).json()) as object;
    expect(empty).toMatchObject({ snapshots: [], refreshed_at: null, total: 0 });
    expect((await viewer.request("/api/hosts/01JD0000000000000000000000/snapshots")).status).toBe(404);
    expect((await viewer.request(`/api/hosts/${hostId}/snapshots?before=nonsense`)).status).toBe(400);
    expect((await viewer.request(`/api/hosts/${hostId}/snapshots?limit=0`)).status).toBe(400);
  });
});

describe("GET /hosts/:id/snapshots", () => {
  it("renders the table with binary sizes, the tabs and a chart path per group", async () => {
    await replaceSnapshots(deps.db, hostId, {
      snapshots: [snap(1, "2026-11-20T01:00:00Z")],
      refreshed_at: "2026-11-21T10:00:00Z",
    });
    for (const day of [1, 2]) {
      await seedJob(
        deps,
        { hostId, kind: "backup", actorKind: "system" },
        {
          status: "succeeded",
          startedAt: new Date(Date.UTC(2026, 10, day, 1)),
          finishedAt: new Date(Date.UTC(2026, 10, day, 1, 2)),
          summary: { total_bytes_processed: 5 * 1024 * 1024, data_added: 1024 },
        },
      );
    }
    const res = await viewer.request(`/hosts/${hostId}/snapshots`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('data-testid="tab-snapshots" aria-selected="true"');
    expect(html).toContain("3.00 MiB");
    expect(html).toContain("1234");
    expect(html).toContain(snap(1, "").id.slice(-8));
    expect(html.match(/<path class="chart-line"/g)).toHaveLength(2);
    expect(html).toContain("5.00 MiB");
    expect(html).not.toMatch(/style="/);
  });
});

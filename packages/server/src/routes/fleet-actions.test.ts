/**
 * Issue 37.5: run now, pause and resume schedules, and delete, aimed at a label selector: an
 * online host gets its pause as one schedule.set with every schedule disabled (each keeps its
 * own setting for resume) and its groups show unscheduled; deletion happens only when the count
 * is confirmed; an empty selector is refused.
 */
import { jobs } from "@fleetback/db";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps;
let admin: TestClient;
const ids: Record<string, string> = {};

beforeEach(async () => {
  ({ deps, admin } = await startSignedInApp());
  for (const [name, env] of [
    ["web-1", "prod"],
    ["web-2", "prod"],
    ["dev-1", "dev"],
  ] as const) {
    ids[name] = (await seedHost(deps, { name, labels: { env } })).host.id;
    const group = await admin.json("POST", `/api/hosts/${ids[name]}/source-groups`, {
      name: "etc",
      includes: ["/etc"],
    });
    const { source_group } = (await group.json()) as { source_group: { id: string } };
    await admin.json("POST", `/api/hosts/${ids[name]}/schedules`, {
      cron: "0 2 * * *",
      source_group_ids: [source_group.id],
    });
  }
});
afterEach(async () => {
  await deps.close();
});

async function act(body: unknown): Promise<{
  status: number;
  body: { matched: number; hosts: Array<{ host_name: string; outcome: string }>; message?: string };
}> {
  const res = await admin.json("POST", "/api/hosts/actions", body);
  return { status: res.status, body: (await res.json()) as never };
}

/** Each schedule's enabled flag in a schedule.set payload. */
function enabledIn(payload: unknown): boolean[] {
  return ((payload as { schedules?: Array<{ enabled: boolean }> } | undefined)?.schedules ?? []).map(
    (s) => s.enabled,
  );
}

describe("acting on a selector", () => {
  it("pauses and resumes the schedules of the matched hosts: one schedule.set each, every schedule disabled", async () => {
    const connection = createRecordingConnection(ids["web-1"] as string);
    deps.hub.register(connection);
    const paused = await act({ selector: "env=prod", action: "pause" });
    expect(paused.body.hosts.map((h) => [h.host_name, h.outcome])).toEqual([
      ["web-1", "paused"],
      ["web-2", "paused"],
    ]);
    const sets = connection.frames.filter((frame) => frame.type === "schedule.set");
    expect(sets).toHaveLength(1);
    expect(enabledIn(sets[0]?.payload)).toEqual([false]);
    const freshness = (await (await admin.request(`/hosts/${ids["web-2"]}/sources`)).text()).match(
      /data-state="([a-z_]+)"/,
    )?.[1];
    expect(freshness).toBe("unscheduled");
    expect((await act({ selector: "env=prod", action: "pause" })).body.hosts.map((h) => h.outcome)).toEqual([
      "already paused",
      "already paused",
    ]);
    const resumed = await act({ selector: "env=prod", action: "resume" });
    expect(resumed.body.hosts.map((h) => h.outcome)).toEqual(["resumed", "resumed"]);
    const last = connection.frames.filter((frame) => frame.type === "schedule.set").at(-1);
    expect(enabledIn(last?.payload)).toEqual([true]);
  });

  it("acts from the host list filtered by a selector, and lists what happened to each host", async () => {
    const page = await (await admin.request(`/hosts?selector=${encodeURIComponent("env=prod")}`)).text();
    expect(page).toContain('data-testid="fleet-actions"');
    expect(await (await admin.request("/hosts")).text()).not.toContain('data-testid="fleet-actions"');
    const res = await admin.form("/hosts/actions", {
      _csrf: csrfFrom(page),
      selector: "env=prod",
      action: "pause",
    });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toMatch(
      /data-testid="fleet-acted">\s*<summary>Pause: 2 hosts matching <code class="wrap">env=prod<\/code>/,
    );
    expect(html).toMatch(/web-1<\/a>: paused/);
  });

  it("runs every group of the matched hosts now (queued for offline ones) and refuses an empty selector", async () => {
    const ran = await act({ selector: "env=dev", action: "run" });
    expect(ran.status).toBe(200);
    expect(ran.body.hosts.map((h) => [h.host_name, h.outcome])).toEqual([["dev-1", "queued"]]);
    expect(await deps.db.select().from(jobs)).toEqual([]);
    const empty = await act({ selector: " ", action: "run" });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toBe("selector: is empty and would match every host");
  });

  it("deletes the matched hosts only when their count is confirmed", async () => {
    const wrong = await admin.json("POST", "/api/hosts/delete", { selector: "env=prod", confirm_count: 3 });
    expect(wrong.status).toBe(409);
    expect(((await wrong.json()) as { message: string }).message).toBe(
      "confirm_count: the selector matches 2 hosts, not 3; nothing was deleted",
    );
    expect((await admin.request(`/api/hosts/${ids["web-1"]}`)).status).toBe(200);
    const deleted = await admin.json("POST", "/api/hosts/delete", { selector: "env=prod", confirm_count: 2 });
    expect(deleted.status).toBe(200);
    expect((await admin.request(`/api/hosts/${ids["web-1"]}`)).status).toBe(404);
    expect((await admin.request(`/api/hosts/${ids["dev-1"]}`)).status).toBe(200);
  });
});

/**
 * A host's source groups over the API and its sources page: each bad field refused by name, the
 * agent's own directories refused, create, edit and delete with conflicts recomputed, admin-only
 * hooks. Running a group is in source-groups-run-now.test.ts, retention that destroys history in
 * source-groups-retention.test.ts.
 */
import { auditLog, hosts, sourceGroups } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { csrfFrom, messageOf } from "../testing/http.js";
import { ETC_GROUP, HOOK_CANARY, sourceGroupsHostPerTest } from "../testing/source-groups-host.js";

const s = sourceGroupsHostPerTest();

describe("source groups: validation", () => {
  it("refuses each bad field with 400 naming it and writes nothing", async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...ETC_GROUP, includes: ["etc"] }, /^includes\.0: /],
      [{ ...ETC_GROUP, includes: [] }, /^includes: /],
      [{ ...ETC_GROUP, name: "has space" }, /^name: /],
      [{ ...ETC_GROUP, name: "a,b" }, /^name: /],
      [{ ...ETC_GROUP, retention_policy: { forever: 1 } }, /^forever: is not a known field/],
      [{ ...ETC_GROUP, retention_policy: { daily: 0 } }, /^retention_policy\.daily: /],
      [{ ...ETC_GROUP, retention_policy: { within: "soon" } }, /^retention_policy\.within: /],
      [{ ...ETC_GROUP, retry_max: 21 }, /^retry_max: /],
      [{ ...ETC_GROUP, retry_backoff_seconds: 86_401 }, /^retry_backoff_seconds: /],
      [{ ...ETC_GROUP, bandwidth_up_kbps: 0 }, /^bandwidth_up_kbps: /],
      [{ ...ETC_GROUP, bandwidth_down_kbps: 1.5 }, /^bandwidth_down_kbps: /],
      [{ ...ETC_GROUP, bandwidth_up_kbps: "512" }, /^bandwidth_up_kbps: /],
    ];
    for (const [body, pattern] of cases) {
      const res = await s.operator.json("POST", s.groupsUrl(), body);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
      expect(await messageOf(res)).toMatch(pattern);
    }
    expect(await s.deps.db.select().from(sourceGroups)).toEqual([]);
  });

  it("refuses an include in the agent's own directories, also those its hello named, on create and edit (issue 33)", async () => {
    await s.deps.db
      .update(hosts)
      .set({ agentDirs: ["/srv/fleetback-state"] })
      .where(eq(hosts.id, s.hostId));
    for (const [path, dir] of [
      ["/etc/fleetback-agent", "/etc/fleetback-agent"],
      ["/etc/fleetback-agent/agent.json", "/etc/fleetback-agent"],
      ["/var/lib/fleetback-agent/", "/var/lib/fleetback-agent"],
      ["/opt/fleetback-agent", "/opt/fleetback-agent"],
      ["/srv/../etc/fleetback-agent", "/etc/fleetback-agent"],
      ["/srv/fleetback-state/update", "/srv/fleetback-state"],
    ] as const) {
      const res = await s.operator.json("POST", s.groupsUrl(), {
        ...ETC_GROUP,
        includes: ["/srv/www", path],
      });
      expect(res.status, path).toBe(400);
      expect(await messageOf(res), path).toBe(
        `includes: ${path} is the agent's own directory ${dir} or lies inside it, which holds the host's agent token and is never backed up, restored, listed or downloaded`,
      );
    }
    expect(await s.deps.db.select().from(sourceGroups)).toEqual([]);
    // A folder above them stays allowed: the agent excludes its own directories from every backup.
    const created = await s.operator.json("POST", s.groupsUrl(), {
      ...ETC_GROUP,
      includes: ["/", "/etc", "/srv"],
    });
    expect(created.status).toBe(201);
    const { source_group } = (await created.json()) as { source_group: { id: string } };
    const edit = await s.operator.json("PUT", `${s.groupsUrl()}/${source_group.id}`, {
      includes: ["/etc/fleetback-agent"],
    });
    expect(edit.status).toBe(400);
    expect(await messageOf(edit)).toMatch(/^includes: \/etc\/fleetback-agent is the agent's own directory/);
    const [group] = await s.deps.db.select().from(sourceGroups);
    expect(group?.includes).toEqual(["/", "/etc", "/srv"]);
  });

  it("answers 409 naming name for a duplicate, on create and on rename", async () => {
    expect((await s.operator.json("POST", s.groupsUrl(), ETC_GROUP)).status).toBe(201);
    const dup = await s.operator.json("POST", s.groupsUrl(), { ...ETC_GROUP, includes: ["/srv"] });
    expect(dup.status).toBe(409);
    expect(await messageOf(dup)).toMatch(/^name: /);
    const other = (await (
      await s.operator.json("POST", s.groupsUrl(), { name: "srv", includes: ["/srv"] })
    ).json()) as {
      source_group: { id: string };
    };
    const rename = await s.operator.json("PUT", `${s.groupsUrl()}/${other.source_group.id}`, { name: "etc" });
    expect(rename.status).toBe(409);
    expect(await s.deps.db.select().from(sourceGroups)).toHaveLength(2);
  });

  it("lets a viewer read but not write", async () => {
    expect((await s.viewer.json("POST", s.groupsUrl(), ETC_GROUP)).status).toBe(403);
    expect((await s.viewer.request(s.groupsUrl())).status).toBe(200);
  });
});

describe("source groups: CRUD and conflicts", () => {
  it("creates, reads, edits, recomputes conflict_dimension for all groups, and deletes", async () => {
    const created = await s.operator.json("POST", s.groupsUrl(), ETC_GROUP);
    expect(created.status).toBe(201);
    const { source_group: group } = (await created.json()) as { source_group: Record<string, unknown> };
    expect(group).toMatchObject({
      name: "etc",
      includes: ["/etc"],
      excludes: [],
      retention_policy: { daily: 7, within: "30d" },
      retry_max: 3,
      retry_backoff_seconds: 300,
      conflict_dimension: null,
      has_pre_hook: false,
    });
    const nginx = (await (
      await s.operator.json("POST", s.groupsUrl(), { name: "nginx", includes: ["/srv/www", "/etc/nginx"] })
    ).json()) as { source_group: { id: string; conflict_dimension: string } };
    expect(nginx.source_group.conflict_dimension).toBe("/etc/nginx");
    const read = (await (await s.viewer.request(`${s.groupsUrl()}/${String(group.id)}`)).json()) as {
      source_group: { conflict_dimension: string };
    };
    expect(read.source_group.conflict_dimension).toBe("/etc");

    const edited = await s.operator.json("PUT", `${s.groupsUrl()}/${nginx.source_group.id}`, {
      includes: ["/srv/www"],
      excludes: ["*.tmp"],
    });
    expect(edited.status).toBe(200);
    const list = (await (await s.viewer.request(s.groupsUrl())).json()) as {
      source_groups: Array<{ name: string; conflict_dimension: string | null; excludes: string[] }>;
    };
    expect(list.source_groups.map((g) => [g.name, g.conflict_dimension])).toEqual([
      ["etc", null],
      ["nginx", null],
    ]);
    expect((await s.operator.json("DELETE", `${s.groupsUrl()}/${String(group.id)}`)).status).toBe(204);
    expect(await s.deps.db.select().from(sourceGroups)).toHaveLength(1);
  });

  it("refuses to delete a group a schedule still fires: 409 with the schedules, nothing deleted", async () => {
    const { source_group: group } = (await (
      await s.operator.json("POST", s.groupsUrl(), ETC_GROUP)
    ).json()) as {
      source_group: { id: string };
    };
    const made = (await (
      await s.operator.json("POST", `/api/hosts/${s.hostId}/schedules`, {
        cron: "0 2 * * *",
        enabled: true,
        source_group_ids: [group.id],
      })
    ).json()) as { schedule: { id: string } };
    const res = await s.operator.json("DELETE", `${s.groupsUrl()}/${group.id}`);
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({
      code: "conflict",
      details: { schedules: [{ id: made.schedule.id, cron: "0 2 * * *" }] },
    });
    expect(await s.deps.db.select().from(sourceGroups)).toHaveLength(1);
  });
});

describe("hooks", () => {
  it("are admin-only: never shown to others, refused from others, audited by name only", async () => {
    const refused = await s.operator.json("POST", s.groupsUrl(), { ...ETC_GROUP, pre_hook: HOOK_CANARY });
    expect(refused.status).toBe(403);
    const created = await s.admin.json("POST", s.groupsUrl(), { ...ETC_GROUP, pre_hook: HOOK_CANARY });
    expect(created.status).toBe(201);
    const adminView = await created.text();
    expect(adminView).toContain(HOOK_CANARY);
    const { source_group: group } = JSON.parse(adminView) as { source_group: { id: string } };
    expect((await s.operator.json("PUT", `${s.groupsUrl()}/${group.id}`, { post_hook: null })).status).toBe(
      403,
    );
    expect(
      (await s.operator.json("PUT", `/api/hosts/${s.hostId}/hooks`, { pre_hook_default: "x" })).status,
    ).toBe(403);
    const hooks = await s.admin.json("PUT", `/api/hosts/${s.hostId}/hooks`, {
      pre_hook_default: `${HOOK_CANARY}-default`,
    });
    expect(await hooks.json()).toEqual({ has_pre_hook_default: true, has_post_hook_default: false });

    const surfaces = [
      await (await s.operator.request(s.groupsUrl())).text(),
      await (await s.viewer.request(`${s.groupsUrl()}/${group.id}`)).text(),
      await (await s.operator.request(`/hosts/${s.hostId}/sources`)).text(),
      await (await s.operator.json("PUT", `${s.groupsUrl()}/${group.id}`, { excludes: ["x"] })).text(),
      JSON.stringify(await s.deps.db.select().from(auditLog)),
      s.deps.logLines.join("\n"),
    ];
    expect(surfaces[0]).toContain('"has_pre_hook":true');
    for (const surface of surfaces) {
      expect(surface).not.toContain("Canary-Hook");
    }
    const [row] = await s.deps.db.select().from(sourceGroups);
    expect(Buffer.from(row?.preHook ?? []).toString("latin1")).not.toContain("Canary-Hook");
    expect(await (await s.admin.request(`/hosts/${s.hostId}/sources`)).text()).toContain(HOOK_CANARY);
  });
});

describe("sources page", () => {
  it("renders the tabs, groups and schedule version, and creates a group from the form", async () => {
    const page = await (await s.operator.request(`/hosts/${s.hostId}/sources`)).text();
    expect(page).toContain('data-testid="tab-sources" aria-selected="true"');
    expect(page).toContain("Agent has version 0 of 0");
    const csrf = csrfFrom(page);
    const bad = await s.operator.form(
      `/hosts/${s.hostId}/source-groups`,
      { _csrf: csrf, name: "web", includes: "relative/path", excludes: "" },
      { "HX-Request": "true" },
    );
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/^includes\.0: /);
    const ok = await s.operator.form(`/hosts/${s.hostId}/source-groups`, {
      _csrf: csrf,
      name: "web",
      includes: "/srv/www\n/etc/nginx\n",
      excludes: "*.log",
      keep_daily: "7",
      keep_within: "1y6m",
      retry_max: "2",
      retry_backoff_seconds: "60",
    });
    expect(ok.status).toBe(303);
    const [row] = await s.deps.db.select().from(sourceGroups);
    expect(row).toMatchObject({
      name: "web",
      includes: ["/srv/www", "/etc/nginx"],
      excludes: ["*.log"],
      retentionPolicy: { daily: 7, within: "1y6m" },
      retryMax: 2,
      retryBackoffSeconds: 60,
    });
    const after = await (await s.viewer.request(`/hosts/${s.hostId}/sources`)).text();
    expect(after).toContain('data-testid="group-web"');
    const hook = await s.operator.form(`/hosts/${s.hostId}/source-groups/${row?.id}`, {
      _csrf: csrf,
      name: "web",
      includes: "/srv",
      pre_hook: "x",
    });
    expect(hook.status).toBe(403);
  });
});

/**
 * Retention that destroys history (issue 13): lowering a source group's policy, or giving a first
 * one to a tag that has snapshots, is an admin's call, audited old → new, by API and by form.
 */
import { auditLog, sourceGroups } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { csrfFrom, messageOf } from "../testing/http.js";
import { ETC_GROUP, sourceGroupsHostPerTest } from "../testing/source-groups-host.js";

const s = sourceGroupsHostPerTest();

describe("source groups: retention that destroys history (issue 13)", () => {
  async function snapshotTagged(tag: string) {
    await replaceSnapshots(s.deps.db, s.hostId, {
      refreshed_at: "2026-11-21T11:00:00Z",
      snapshots: [
        {
          id: "a".repeat(64),
          short_id: "aaaaaaaa",
          time: "2026-11-21T10:00:00Z",
          hostname: "db-01",
          paths: ["/etc"],
          tags: [tag],
          size_bytes: 1,
          file_count: 1,
        },
      ],
    });
  }
  const auditOf = async (action: string) =>
    (await s.deps.db.select().from(auditLog)).filter((row) => row.action === action);

  it("an operator cannot lower a policy (403, nothing changed); raising is fine; an admin may, audited old → new", async () => {
    const created = (await (await s.operator.json("POST", s.groupsUrl(), ETC_GROUP)).json()) as {
      source_group: { id: string };
    };
    const url = `${s.groupsUrl()}/${created.source_group.id}`;
    for (const retention_policy of [
      { daily: 1, within: "30d" },
      { daily: 7, within: "1d" },
      { daily: 7 },
      { last: 1 },
    ]) {
      const res = await s.operator.json("PUT", url, { retention_policy });
      expect(res.status, JSON.stringify(retention_policy)).toBe(403);
      expect(await messageOf(res)).toMatch(/^retention_policy: lowering keep .*only an admin/);
    }
    const [row] = await s.deps.db
      .select()
      .from(sourceGroups)
      .where(eq(sourceGroups.id, created.source_group.id));
    expect(row?.retentionPolicy).toEqual({ daily: 7, within: "30d" });
    // Keeping more, or adding a key, destroys nothing.
    const raised = await s.operator.json("PUT", url, {
      retention_policy: { daily: 14, within: "1y", last: 3 },
    });
    expect(raised.status).toBe(200);

    const lowered = await s.admin.json("PUT", url, { retention_policy: { last: 1 } });
    expect(lowered.status).toBe(200);
    const updates = await auditOf("source_group.update");
    expect(updates.at(-1)?.details).toMatchObject({
      retention_policy: {
        from: { daily: 14, within: "1y", last: 3 },
        to: { last: 1 },
        lowered: ["last", "daily", "within"],
      },
    });
    expect(updates.at(-2)?.details).toMatchObject({
      retention_policy: {
        from: { daily: 7, within: "30d" },
        to: { daily: 14, within: "1y", last: 3 },
        lowered: [],
      },
    });
  });

  it("a first policy for a tag that has snapshots, on create or by renaming, is a lowering too", async () => {
    await snapshotTagged("db");
    const fresh = await s.operator.json("POST", s.groupsUrl(), { ...ETC_GROUP, name: "web" });
    expect(fresh.status).toBe(201); // no snapshots of tag web: nothing to destroy
    const onto = await s.operator.json("POST", s.groupsUrl(), { ...ETC_GROUP, name: "db" });
    expect(onto.status).toBe(403);
    const { source_group: web } = (await fresh.json()) as { source_group: { id: string } };
    const renamed = await s.operator.json("PUT", `${s.groupsUrl()}/${web.id}`, { name: "db" });
    expect(renamed.status).toBe(403);
    const keepAll = await s.operator.json("POST", s.groupsUrl(), { name: "db", includes: ["/db"] });
    expect(keepAll.status).toBe(201);
    const { source_group: db } = (await keepAll.json()) as { source_group: { id: string } };
    expect(
      (await s.operator.json("PUT", `${s.groupsUrl()}/${db.id}`, { retention_policy: { last: 1 } })).status,
    ).toBe(403);
    expect(
      (await s.admin.json("PUT", `${s.groupsUrl()}/${db.id}`, { retention_policy: { last: 1 } })).status,
    ).toBe(200);
  });

  it("the page form is refused the same way", async () => {
    const created = (await (await s.operator.json("POST", s.groupsUrl(), ETC_GROUP)).json()) as {
      source_group: { id: string };
    };
    const page = await s.operator.request(`/hosts/${s.hostId}/sources`);
    const body = new URLSearchParams({
      _csrf: csrfFrom(await page.text()),
      name: "etc",
      includes: "/etc",
      keep_last: "1",
    });
    const res = await s.operator.request(`/hosts/${s.hostId}/source-groups/${created.source_group.id}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Origin: new URL(s.deps.config.baseUrl).origin,
      },
      body: body.toString(),
    });
    expect(res.status).toBe(403);
    const [row] = await s.deps.db
      .select()
      .from(sourceGroups)
      .where(eq(sourceGroups.id, created.source_group.id));
    expect(row?.retentionPolicy).toEqual({ daily: 7, within: "30d" });
  });
});

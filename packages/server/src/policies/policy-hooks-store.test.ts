import { hosts, sourceGroups } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { and, eq, sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { openHook, resolveHooks } from "../sources/hooks.js";
import { updateGroup } from "../sources/source-groups.js";
import { seedAuditContext, seedHost } from "../testing/seed.js";
import { createTestDeps } from "../testing/test-deps.js";
import { applyFleetDocument, exportFleet } from "./fleet-document.js";
import { hostPolicies } from "./host-policies.js";
import { policyJson, versionJson } from "./policy-json.js";
import type { PolicyBody } from "./policy-spec.js";
import {
  createPolicy,
  getPolicy,
  listVersions,
  previewPolicy,
  rollbackPolicy,
  updatePolicy,
} from "./policy-store.js";
import { versionChanges } from "./spec-diff.js";

const CANARY = "echo canary-hook-5e1d9 && pg_dump app > /var/backups/app.sql";
const SECOND = "echo canary-hook-5e1d9 second && sync";

function body(preHook?: string | null): PolicyBody {
  const group: PolicyBody["spec"]["groups"][number] = { name: "db", includes: ["/var/backups"] };
  if (preHook !== undefined) {
    group.pre_hook = preHook;
  }
  return {
    name: "databases",
    selector: "role=db",
    spec: { groups: [group], schedules: [{ name: "nightly", cron: "0 3 * * *", groups: ["db"] }] },
  };
}

function noCanary(value: unknown): void {
  expect(JSON.stringify(value)).not.toContain("canary-hook-5e1d9");
}

runDbSuite("hooks in fleet policies", (getDb) => {
  async function setUp() {
    const deps = await createTestDeps({ db: getDb() });
    const audit = await seedAuditContext(deps);
    const one = (await seedHost(deps, { name: "db-1", labels: { role: "db" } })).host;
    const two = (await seedHost(deps, { name: "db-2", labels: { role: "db" } })).host;
    const hookOf = async (hostId: string) => {
      const [row] = await deps.db
        .select()
        .from(sourceGroups)
        .where(and(eq(sourceGroups.hostId, hostId), eq(sourceGroups.name, "db")));
      const [host] = await deps.db.select().from(hosts).where(eq(hosts.id, hostId));
      if (!row || !host) {
        throw new Error(`host ${hostId} has no group db`);
      }
      // What a backup of the group sends the agent (sources/dispatch-backup.ts).
      return { row, hooks: resolveHooks(deps.keys.secret, hostId, row, host) };
    };
    /** Every table a policy's content or its story is kept in, as text. */
    const storedText = async () => {
      const rows = await deps.db.execute(sql`select (
          (select coalesce(json_agg(p)::text, '') from policies p) ||
          (select coalesce(json_agg(v)::text, '') from policy_versions v) ||
          (select coalesce(json_agg(a)::text, '') from audit_log a) ||
          (select coalesce(json_agg(g)::text, '') from source_groups g)
        ) as text`);
      const first = (Array.isArray(rows) ? rows[0] : (rows as { rows: unknown[] }).rows[0]) as {
        text: string;
      };
      return first.text;
    };
    return { deps, audit, one, two, hookOf, storedText };
  }

  it("gives every covered host the policy's hook, sealed for that host, and never keeps or shows its text", async () => {
    const { deps, audit, one, two, hookOf, storedText } = await setUp();
    const created = await createPolicy(deps, audit, body(CANARY));
    expect(created.plan.hosts_changed).toBe(2);
    for (const host of [one, two]) {
      const { row, hooks } = await hookOf(host.id);
      expect(hooks).toEqual({ pre_hook: CANARY });
      expect(row.overrides).toEqual({});
      // Sealed with the host as additional data: another host's row cannot be opened as its own.
      expect(openHook(deps.keys.secret, host.id === one.id ? two.id : one.id, row.preHook)).toBeUndefined();
    }
    expect(await storedText()).not.toContain("canary-hook-5e1d9");

    const shown = policyJson(await getPolicy(deps.db, created.id));
    noCanary(shown);
    expect(shown.spec.groups[0]).toMatchObject({ name: "db", has_pre_hook: true, has_post_hook: false });
    const provenance = await hostPolicies(deps, one.id);
    noCanary(provenance);
    expect(provenance.groups[0]?.settings).toMatchObject({ has_pre_hook: true, has_post_hook: false });
    noCanary((await listVersions(deps.db, created.id)).map(versionJson));
    noCanary(await exportFleet(deps.db, deps));
  });

  it("keeps a left-out hook, previews and applies a changed one, keeps a host's own, rolls back, removes on null", async () => {
    const { deps, audit, one, two, hookOf, storedText } = await setUp();
    const { id } = await createPolicy(deps, audit, body(CANARY));

    // Left out (a form or an exported document sent back): the hook stays, nothing changes.
    const kept = await updatePolicy(deps, audit, id, body());
    expect(kept.plan.hosts_changed).toBe(0);
    expect((await hookOf(one.id)).hooks).toEqual({ pre_hook: CANARY });

    // The db-2 host sets its own hook over the policy's: an override, marked without its text.
    const own = (await hookOf(two.id)).row;
    await updateGroup(deps, audit, two.id, own.id, { pre_hook: "echo own" });
    expect((await hookOf(two.id)).row.overrides).toEqual({ pre_hook: true });

    const preview = await previewPolicy(deps, body(SECOND), id);
    noCanary(preview);
    expect(preview.hosts_changed).toBe(1);
    expect(preview.hosts.find((h) => h.host_id === one.id)?.groups.changed).toEqual([
      { name: "db", fields: ["pre_hook"] },
    ]);
    expect((await hookOf(one.id)).hooks).toEqual({ pre_hook: CANARY });

    const changed = await updatePolicy(deps, audit, id, body(SECOND));
    expect(changed.version).toBe(3);
    expect((await hookOf(one.id)).hooks).toEqual({ pre_hook: SECOND });
    expect((await hookOf(two.id)).hooks).toEqual({ pre_hook: "echo own" });
    const [v3, v2] = await listVersions(deps.db, id);
    if (!v3 || !v2) {
      throw new Error("versions missing");
    }
    expect(versionChanges(deps.keys.secret, id, v2, v3)).toEqual([
      { path: 'spec.groups["db"].pre_hook', before: "(set)", after: "(changed)" },
    ]);

    const back = await rollbackPolicy(deps, audit, id, 1);
    expect(back.plan.hosts_changed).toBe(1);
    expect((await hookOf(one.id)).hooks).toEqual({ pre_hook: CANARY });
    expect((await hookOf(two.id)).hooks).toEqual({ pre_hook: "echo own" });

    const removed = await updatePolicy(deps, audit, id, body(null));
    expect(removed.plan.hosts_changed).toBe(1);
    expect((await hookOf(one.id)).hooks).toEqual({});
    expect((await hookOf(one.id)).row.preHook).toBeNull();
    expect(await storedText()).not.toContain("canary-hook-5e1d9");
  });

  it("round-trips a fleet document without its hooks, and says a document's hook change without its text", async () => {
    const { deps, audit, one, hookOf } = await setUp();
    await createPolicy(deps, audit, body(CANARY));
    const document = await exportFleet(deps.db, deps);
    expect(document.policies?.[0]?.spec.groups[0]).not.toHaveProperty("pre_hook");
    expect((await applyFleetDocument(deps, audit, document, true)).changes).toEqual([]);
    expect((await applyFleetDocument(deps, audit, document, false)).changes).toEqual([]);
    expect((await hookOf(one.id)).hooks).toEqual({ pre_hook: CANARY });

    // The same text given again is no change either.
    const same = { ...document, policies: [body(CANARY)] };
    expect((await applyFleetDocument(deps, audit, same, true)).changes).toEqual([]);

    const changed = { ...document, policies: [body(SECOND)] };
    const dry = await applyFleetDocument(deps, audit, changed, true);
    noCanary(dry);
    expect(dry.changes).toEqual([
      {
        subject: "policy databases",
        path: 'spec.groups["db"].pre_hook',
        before: "(set)",
        after: "(changed)",
      },
    ]);
    expect((await hookOf(one.id)).hooks).toEqual({ pre_hook: CANARY });
    await applyFleetDocument(deps, audit, changed, false);
    expect((await hookOf(one.id)).hooks).toEqual({ pre_hook: SECOND });

    // A new policy's hook in a dry run is said as set, not shown.
    const added = {
      ...document,
      policies: [body(SECOND), { ...body(CANARY), name: "more", selector: "role=db,tier=1" }],
    };
    const more = await applyFleetDocument(deps, audit, added, true);
    noCanary(more);
    expect(more.changes[0]?.after).toMatchObject({
      spec: { groups: [{ name: "db", has_pre_hook: true }] },
    });
  });
});

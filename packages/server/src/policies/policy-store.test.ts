import { auditLog, hosts, scheduleSourceGroups, schedules, sourceGroups } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { asc, eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { seedAuditContext, seedHost } from "../testing/seed.js";
import { createTestDeps } from "../testing/test-deps.js";
import type { PolicyBody } from "./policy-spec.js";
import {
  createPolicy,
  deletePolicy,
  listVersions,
  previewPolicy,
  rollbackPolicy,
  updatePolicy,
} from "./policy-store.js";

const PROD: PolicyBody = {
  name: "prod-baseline",
  selector: "env=prod",
  spec: {
    groups: [{ name: "etc", includes: ["/etc"], retention_policy: { daily: 7 } }],
    schedules: [{ name: "nightly", cron: "0  2 * * *", groups: ["etc"] }],
  },
};

runDbSuite("fleet policies", (getDb) => {
  async function setUp() {
    const deps = await createTestDeps({ db: getDb() });
    const audit = await seedAuditContext(deps);
    const web = (await seedHost(deps, { name: "web", labels: { env: "prod" } })).host;
    const db = (await seedHost(deps, { name: "db", labels: { env: "prod", role: "db" } })).host;
    const dev = (await seedHost(deps, { name: "dev", labels: { env: "dev" } })).host;
    const configOf = async (hostId: string) => {
      const groups = await deps.db
        .select()
        .from(sourceGroups)
        .where(eq(sourceGroups.hostId, hostId))
        .orderBy(asc(sourceGroups.name));
      const rows = await deps.db
        .select({
          cron: schedules.cron,
          policySchedule: schedules.policySchedule,
          version: schedules.policyVersion,
          group: sourceGroups.name,
        })
        .from(schedules)
        .leftJoin(scheduleSourceGroups, eq(scheduleSourceGroups.scheduleId, schedules.id))
        .leftJoin(sourceGroups, eq(sourceGroups.id, scheduleSourceGroups.sourceGroupId))
        .where(eq(schedules.hostId, hostId));
      const [host] = await deps.db
        .select({ version: hosts.scheduleVersion })
        .from(hosts)
        .where(eq(hosts.id, hostId));
      return { groups, schedules: rows, scheduleVersion: host?.version };
    };
    return { deps, audit, web, db, dev, configOf };
  }

  it("gives the hosts its selector matches its groups and schedules, marked with the policy and version, audited", async () => {
    const { deps, audit, web, db, dev, configOf } = await setUp();
    const created = await createPolicy(deps, audit, PROD);
    expect(created.version).toBe(1);
    expect(created.plan).toMatchObject({ hosts_covered: 2, hosts_changed: 2 });
    for (const host of [web, db]) {
      const config = await configOf(host.id);
      expect(
        config.groups.map((g) => [g.name, g.includes, g.retentionPolicy, g.policyId, g.policyVersion]),
      ).toEqual([["etc", ["/etc"], { daily: 7 }, created.id, 1]]);
      expect(config.schedules).toEqual([
        { cron: "0 2 * * *", policySchedule: "nightly", version: 1, group: "etc" },
      ]);
      expect(config.scheduleVersion).toBe(1);
    }
    expect((await configOf(dev.id)).groups).toEqual([]);
    const [entry] = await deps.db.select().from(auditLog).where(eq(auditLog.action, "policy.create"));
    expect(entry?.details).toMatchObject({
      name: "prod-baseline",
      version: 1,
      hosts_covered: 2,
      hosts_changed: 2,
    });
  });

  it("previews an edit without writing, applies it as version 2 keeping a host's override, and rolls back to version 1", async () => {
    const { deps, audit, web, db, configOf } = await setUp();
    const { id } = await createPolicy(deps, audit, PROD);
    // The db host keeps its own retry count for the policy's group.
    await deps.db
      .update(sourceGroups)
      .set({ retryMax: 9, overrides: { retry_max: 9 } })
      .where(eq(sourceGroups.hostId, db.id));
    const edit: PolicyBody = {
      ...PROD,
      spec: {
        groups: [{ name: "etc", includes: ["/etc", "/srv"], retention_policy: { daily: 7 }, retry_max: 5 }],
        schedules: [{ name: "nightly", cron: "30 1 * * *", groups: ["etc"] }],
      },
    };
    const preview = await previewPolicy(deps, edit, id);
    expect(preview.hosts_changed).toBe(2);
    expect(preview.hosts.find((h) => h.host_id === db.id)).toMatchObject({
      groups: { changed: [{ name: "etc", fields: ["includes"] }] },
      schedules: { changed: ["prod-baseline/nightly"] },
    });
    expect(preview.hosts.find((h) => h.host_id === web.id)?.groups.changed).toEqual([
      { name: "etc", fields: ["includes", "retry_max"] },
    ]);
    expect((await configOf(web.id)).groups[0]?.includes).toEqual(["/etc"]);

    const second = await updatePolicy(deps, audit, id, edit);
    expect(second.version).toBe(2);
    const webNow = await configOf(web.id);
    expect(webNow.groups.map((g) => [g.includes, g.retryMax, g.policyVersion])).toEqual([
      [["/etc", "/srv"], 5, 2],
    ]);
    expect(webNow.schedules.map((s) => [s.cron, s.version])).toEqual([["30 1 * * *", 2]]);
    expect(webNow.scheduleVersion).toBe(2);
    expect((await configOf(db.id)).groups.map((g) => [g.includes, g.retryMax])).toEqual([
      [["/etc", "/srv"], 9],
    ]);

    const third = await rollbackPolicy(deps, audit, id, 1);
    expect(third.version).toBe(3);
    const back = await configOf(web.id);
    expect(back.groups.map((g) => [g.includes, g.retryMax, g.policyVersion])).toEqual([[["/etc"], 3, 3]]);
    expect(back.schedules.map((s) => s.cron)).toEqual(["0 2 * * *"]);
    expect((await configOf(db.id)).groups[0]?.retryMax).toBe(9);
    expect((await listVersions(deps.db, id)).map((v) => [v.version, v.note])).toEqual([
      [3, "rollback to version 1"],
      [2, null],
      [1, null],
    ]);
    // The same content again changes no host and bumps no schedule version.
    const again = await updatePolicy(deps, audit, id, PROD);
    expect(again.plan.hosts_changed).toBe(0);
    expect((await configOf(web.id)).scheduleVersion).toBe(3);
  });

  it("refuses a bad document with the path of the field and writes nothing", async () => {
    const { deps, audit, web, configOf } = await setUp();
    const bad: PolicyBody = {
      ...PROD,
      spec: {
        groups: PROD.spec.groups,
        schedules: [{ name: "nightly", cron: "0 2 * * *", groups: ["etc", "home"] }],
      },
    };
    await expect(createPolicy(deps, audit, bad)).rejects.toThrow(
      /^spec\.schedules\.0\.groups\.1: home is not a group of this policy/,
    );
    await expect(createPolicy(deps, audit, { ...PROD, selector: "env in (prod" })).rejects.toThrow(
      /^selector: /,
    );
    const own = { ...PROD, spec: { groups: [{ name: "x", includes: ["/srv", "/etc/fleetback-agent"] }] } };
    await expect(createPolicy(deps, audit, own)).rejects.toThrow(
      /^spec\.groups\.0\.includes\.1: .*agent's own directory/,
    );
    expect((await configOf(web.id)).groups).toEqual([]);
  });

  it("deleting takes back what it gave, but a group a host's own schedule fires stays, as the host's", async () => {
    const { deps, audit, web, db, configOf } = await setUp();
    const { id } = await createPolicy(deps, audit, PROD);
    const [group] = await deps.db.select().from(sourceGroups).where(eq(sourceGroups.hostId, db.id));
    await deps.db
      .insert(schedules)
      .values({ id: "01JOWNSCHEDULE000000000000", hostId: db.id, cron: "0 5 * * *" });
    await deps.db
      .insert(scheduleSourceGroups)
      .values({ scheduleId: "01JOWNSCHEDULE000000000000", sourceGroupId: group?.id ?? "" });
    const plan = await deletePolicy(deps, audit, id);
    expect(plan.hosts_changed).toBe(2);
    expect((await configOf(web.id)).groups).toEqual([]);
    expect((await configOf(web.id)).schedules).toEqual([]);
    const kept = await configOf(db.id);
    expect(kept.groups.map((g) => [g.name, g.policyId])).toEqual([["etc", null]]);
    expect(kept.schedules).toEqual([
      { cron: "0 5 * * *", policySchedule: null, version: null, group: "etc" },
    ]);
  });
});

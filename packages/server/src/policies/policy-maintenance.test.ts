/**
 * Issue 37.2: a policy gives the hosts it covers their maintenance and drill cadences like their
 * groups: the higher priority's field applies, a field the host set itself stays, equal
 * priorities that disagree apply neither, and what a policy gave goes back to the default when
 * no policy gives it any more.
 */
import { maintenance } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { getMaintenance, updateMaintenance } from "../maintenance/maintenance-record.js";
import { seedAuditContext, seedHost } from "../testing/seed.js";
import { createTestDeps } from "../testing/test-deps.js";
import { hostPolicies } from "./host-policies.js";
import { createPolicy, deletePolicy, previewPolicy, updatePolicy } from "./policy-store.js";

runDbSuite("policy maintenance", (getDb) => {
  it("sets each host's cadences from its policies, keeps the host's own, and takes back what it gave", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const audit = await seedAuditContext(deps);
    const web = (await seedHost(deps, { name: "web", labels: { env: "prod" } })).host;
    const db = (await seedHost(deps, { name: "db", labels: { env: "prod", role: "db" } })).host;
    const base = {
      name: "prod",
      selector: "env=prod",
      spec: {
        groups: [],
        maintenance: { prune_cron: "0 1 * * 6", drill_enabled: true, drill_cron: "0 7 * * 1" },
      },
    };
    const preview = await previewPolicy(deps, base);
    expect(preview.hosts.map((h) => h.maintenance)).toEqual([
      ["drill_cron", "drill_enabled", "prune_cron"],
      ["drill_cron", "drill_enabled", "prune_cron"],
    ]);
    const prod = await createPolicy(deps, audit, base);
    const dbPolicy = await createPolicy(deps, audit, {
      name: "db",
      selector: "role=db",
      priority: 200,
      spec: { groups: [], maintenance: { prune_cron: "30 2 * * *" } },
    });
    const rowOf = async (hostId: string) => getMaintenance(deps.db, hostId, deps.clock.now());
    expect(await rowOf(web.id)).toMatchObject({
      pruneCron: "0 1 * * 6",
      drillEnabled: true,
      drillCron: "0 7 * * 1",
    });
    expect(await rowOf(db.id)).toMatchObject({ pruneCron: "30 2 * * *", drillEnabled: true });
    expect((await hostPolicies(deps, db.id)).maintenance.from.prune_cron).toEqual({
      id: dbPolicy.id,
      name: "db",
      version: 1,
    });

    // The host's own drill cadence stays over the next version.
    await updateMaintenance(deps, audit, web.id, { drill_cron: "0 8 * * 2" });
    expect((await rowOf(web.id)).overrides).toEqual({ drill_cron: "0 8 * * 2" });
    await updatePolicy(deps, audit, prod.id, {
      ...base,
      spec: {
        groups: [],
        maintenance: { ...base.spec.maintenance, drill_cron: "0 9 * * 3", check_enabled: false },
      },
    });
    expect(await rowOf(web.id)).toMatchObject({
      drillCron: "0 8 * * 2",
      checkEnabled: false,
      pruneCron: "0 1 * * 6",
    });
    expect((await hostPolicies(deps, web.id)).maintenance.overridden).toEqual(["drill_cron"]);

    await deletePolicy(deps, audit, prod.id);
    const back = await rowOf(web.id);
    expect(back).toMatchObject({
      pruneCron: "0 4 * * 0",
      drillEnabled: false,
      checkEnabled: true,
      drillCron: "0 8 * * 2",
    });
    expect(back.policyFields).toEqual({});
    const [dbRow] = await deps.db.select().from(maintenance).where(eq(maintenance.hostId, db.id));
    expect(dbRow?.pruneCron).toBe("30 2 * * *");
  });

  it("refuses a bad maintenance cron at its path in the document", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const audit = await seedAuditContext(deps);
    await expect(
      createPolicy(deps, audit, {
        name: "bad",
        selector: "",
        spec: { groups: [], maintenance: { check_cron: "61 * * * *" } },
      }),
    ).rejects.toThrow(/^spec\.maintenance\.check_cron: /);
  });
});

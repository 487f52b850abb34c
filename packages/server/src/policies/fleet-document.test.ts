import { auditLog, hosts, policies, sourceGroups } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { getMaintenance, updateMaintenance } from "../maintenance/maintenance-record.js";
import { createChannel, listChannels } from "../notifications/channels.js";
import { seedAuditContext, seedHost } from "../testing/seed.js";
import { createTestDeps } from "../testing/test-deps.js";
import { applyFleetDocument, exportFleet, type FleetDocument } from "./fleet-document.js";
import { createPolicy } from "./policy-store.js";

runDbSuite("fleet document", (getDb) => {
  async function setUp() {
    const deps = await createTestDeps({ db: getDb() });
    const audit = await seedAuditContext(deps);
    const web = (await seedHost(deps, { name: "web", labels: { env: "prod" } })).host;
    const dev = (await seedHost(deps, { name: "dev", labels: { env: "dev" } })).host;
    await createPolicy(deps, audit, {
      name: "prod",
      selector: "env=prod",
      spec: {
        groups: [{ name: "etc", includes: ["/etc"] }],
        schedules: [{ name: "nightly", cron: "0 2 * * *", groups: ["etc"] }],
      },
    });
    return { deps, audit, web, dev };
  }

  it("exports what applying back changes nothing of, twice; a changed document changes exactly its differences", async () => {
    const { deps, audit, web, dev } = await setUp();
    const document = await exportFleet(deps.db, deps);
    expect(document.hosts?.map((h) => [h.name, h.labels])).toEqual([
      ["dev", { env: "dev" }],
      ["web", { env: "prod" }],
    ]);
    expect((await applyFleetDocument(deps, audit, document, true)).changes).toEqual([]);
    expect((await applyFleetDocument(deps, audit, document, false)).changes).toEqual([]);

    const changed: FleetDocument = {
      version: 1,
      hosts: [{ name: "dev", labels: { env: "prod", tier: "2" } }],
      policies: [
        {
          name: "prod",
          selector: "env = prod",
          spec: {
            groups: [{ name: "etc", includes: ["/etc", "/srv"] }],
            schedules: [{ name: "nightly", cron: "0 2 * * *", groups: ["etc"] }],
          },
        },
      ],
    };
    const dry = await applyFleetDocument(deps, audit, changed, true);
    expect(dry.changes).toEqual([
      { subject: "host dev", path: "labels.env", before: "dev", after: "prod" },
      { subject: "host dev", path: "labels.tier", before: null, after: "2" },
      {
        subject: "policy prod",
        path: 'spec.groups["etc"].includes',
        before: ["/etc"],
        after: ["/etc", "/srv"],
      },
    ]);
    expect(await deps.db.select().from(sourceGroups).where(eq(sourceGroups.hostId, dev.id))).toEqual([]);

    const applied = await applyFleetDocument(deps, audit, changed, false);
    expect(applied.changes).toEqual(dry.changes);
    expect(applied.plan.hosts_changed).toBe(2);
    for (const host of [web, dev]) {
      const groups = await deps.db.select().from(sourceGroups).where(eq(sourceGroups.hostId, host.id));
      expect(groups.map((g) => [g.includes, g.policyVersion])).toEqual([[["/etc", "/srv"], 2]]);
    }
    const [entry] = await deps.db.select().from(auditLog).where(eq(auditLog.action, "fleet.apply"));
    expect(entry?.details).toMatchObject({
      changes: 3,
      hosts_labelled: 1,
      policies_written: 1,
      policies_deleted: 0,
    });
    expect((await applyFleetDocument(deps, audit, changed, false)).changes).toEqual([]);
    expect(await deps.db.select().from(auditLog).where(eq(auditLog.action, "fleet.apply"))).toHaveLength(1);

    // A document without the key leaves the policies alone; with an empty list, deletes them.
    expect((await applyFleetDocument(deps, audit, { version: 1 }, true)).changes).toEqual([]);
    // A document without the policy deletes it, and what it gave goes.
    const none = await applyFleetDocument(deps, audit, { version: 1, policies: [] }, false);
    expect(none.changes.map((c) => c.subject)).toEqual(["policy prod"]);
    expect(await deps.db.select().from(policies)).toEqual([]);
    expect(await deps.db.select().from(sourceGroups)).toEqual([]);
  });

  it("carries notification channels without their secrets: kept when left out, never printed when changed", async () => {
    const { deps, audit } = await setUp();
    const secret = "canary-webhook-secret-0123456789";
    await createChannel(deps, audit, {
      name: "ops",
      kind: "webhook",
      config: { url: "https://hooks.example.org/ops?token=canary-token", secret },
    });
    const document = await exportFleet(deps.db, deps);
    expect(document.channels).toEqual([
      { name: "ops", kind: "webhook", enabled: true, notify_resolved: false, config: {} },
    ]);
    expect(JSON.stringify(document)).not.toContain("canary");
    expect((await applyFleetDocument(deps, audit, document, false)).changes).toEqual([]);

    const rotated = {
      ...document,
      channels: [{ ...document.channels?.[0], enabled: false, config: { secret: `${secret}-2` } }],
    };
    const result = await applyFleetDocument(deps, audit, rotated as FleetDocument, false);
    expect(result.changes).toEqual([
      { subject: "channel ops", path: "config.secret", before: "(set)", after: "(changed)" },
      { subject: "channel ops", path: "enabled", before: true, after: false },
    ]);
    const [stored] = await listChannels(deps);
    expect(stored?.settings?.config).toEqual({
      url: "https://hooks.example.org/ops?token=canary-token",
      secret: `${secret}-2`,
    });
    expect(JSON.stringify(await deps.db.select().from(auditLog))).not.toContain("canary");

    const missingSecret = {
      ...document,
      channels: [...(document.channels ?? []), { name: "new", kind: "slack", config: {} }],
    };
    await expect(applyFleetDocument(deps, audit, missingSecret, false)).rejects.toThrow(
      /^channels\.1\.config\.url: /,
    );
    const none = await applyFleetDocument(deps, audit, { version: 1, channels: [] }, false);
    expect(none.changes).toEqual([
      { subject: "channel ops", path: "", before: { kind: "webhook" }, after: null },
    ]);
    expect(await listChannels(deps)).toEqual([]);
  });

  it("refuses a bad document whole, naming the path of the bad field, and changes nothing", async () => {
    const { deps, audit, dev } = await setUp();
    const good = await exportFleet(deps.db, deps);
    const cases: Array<[unknown, RegExp]> = [
      [{ ...good, version: 2 }, /^version: /],
      [{ ...good, hosts: [{ name: "nobody", labels: {} }] }, /^hosts\.0: no host is named nobody/],
      [{ ...good, hosts: [{ name: "dev", labels: { "-x": "1" } }] }, /^hosts\.0\.labels\.-x: /],
      [
        {
          version: 1,
          hosts: [{ name: "dev", labels: { env: "qa" } }],
          policies: [{ name: "prod", selector: "", spec: { groups: [{ name: "etc", includes: ["etc"] }] } }],
        },
        /^policies\.0\.spec\.groups\.0\.includes\.0: /,
      ],
      [
        {
          version: 1,
          policies: [
            { name: "prod", selector: "", spec: { groups: [] } },
            { name: "prod", selector: "", spec: { groups: [] } },
          ],
        },
        /^policies\.1\.name: a second policy named prod/,
      ],
    ];
    for (const [document, message] of cases) {
      await expect(applyFleetDocument(deps, audit, document, false)).rejects.toThrow(message);
    }
    const [row] = await deps.db.select({ labels: hosts.labels }).from(hosts).where(eq(hosts.id, dev.id));
    expect(row?.labels).toEqual({ env: "dev" });
    expect(await exportFleet(deps.db, deps)).toEqual(good);
  });

  it("carries each host's own maintenance cadences: what it set itself and what it keeps over a policy", async () => {
    const { deps, audit, web, dev } = await setUp();
    await createPolicy(deps, audit, {
      name: "checks",
      selector: "env=prod",
      spec: { groups: [], maintenance: { check_cron: "0 1 * * 0", drill_enabled: true } },
    });
    await updateMaintenance(deps, audit, web.id, { prune_cron: "0 2 * * 6", check_cron: "0 9 * * 0" });
    await updateMaintenance(deps, audit, dev.id, { forget_enabled: false });
    const document = await exportFleet(deps.db, deps);
    expect(document.hosts?.map((h) => [h.name, h.maintenance])).toEqual([
      ["dev", { forget_enabled: false }],
      // check_cron is the policy's field the host keeps its own value of; drill_enabled is the policy's.
      ["web", { prune_cron: "0 2 * * 6", check_cron: "0 9 * * 0" }],
    ]);
    expect((await applyFleetDocument(deps, audit, document, false)).changes).toEqual([]);

    const changed: FleetDocument = {
      version: 1,
      hosts: [{ name: "web", labels: { env: "prod" }, maintenance: { drill_sample_files: 50 } }],
    };
    expect((await applyFleetDocument(deps, audit, changed, true)).changes).toEqual([
      { subject: "host web", path: "maintenance.prune_cron", before: "0 2 * * 6", after: null },
      { subject: "host web", path: "maintenance.check_cron", before: "0 9 * * 0", after: null },
      { subject: "host web", path: "maintenance.drill_sample_files", before: null, after: 50 },
    ]);
    await applyFleetDocument(deps, audit, changed, false);
    const row = await getMaintenance(deps.db, web.id, deps.clock.now());
    // Own field gone: back to the default; override handed back: the policy's value again.
    expect(row).toMatchObject({
      pruneCron: "0 4 * * 0",
      checkCron: "0 1 * * 0",
      drillEnabled: true,
      drillSampleFiles: 50,
      overrides: {},
    });
    expect((await applyFleetDocument(deps, audit, changed, false)).changes).toEqual([]);
    // A host entry without `maintenance` leaves the dev host's own setting as it was.
    expect((await getMaintenance(deps.db, dev.id, deps.clock.now())).forgetEnabled).toBe(false);

    const bad = {
      version: 1,
      hosts: [{ name: "web", labels: {}, maintenance: { prune_cron: "61 * * * *" } }],
    };
    await expect(applyFleetDocument(deps, audit, bad, false)).rejects.toThrow(
      /^hosts\.0\.maintenance\.prune_cron: /,
    );
    expect((await getMaintenance(deps.db, web.id, deps.clock.now())).pruneCron).toBe("0 4 * * 0");
  });
});

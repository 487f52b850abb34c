import { alerts } from "@fleetback/db";
import { beforeEach, describe, expect, it } from "vitest";
import { raiseAlert } from "../alerts/alerts.js";
import { csrfFrom } from "../testing/http.js";
import { seedHost } from "../testing/seed.js";
import { signedInPerTest } from "../testing/signed-in-app.js";

const s = signedInPerTest();
let hostId: string;

beforeEach(async () => {
  hostId = (await seedHost(s.deps, { name: "db-01" })).host.id;
});

describe("alerts", () => {
  it("lists open alerts by default, filters by state, and resolves by hand once", async () => {
    const now = s.deps.clock.now();
    const check = await raiseAlert(
      s.deps,
      { hostId, kind: "check_failed", dedupKey: "" },
      { message: "check failed: repository contains errors" },
      now,
    );
    await raiseAlert(
      s.deps,
      { hostId, kind: "prune_failed", dedupKey: "" },
      { message: "prune failed" },
      now,
    );
    const listed = (await (await s.admin.json("GET", "/api/alerts")).json()) as {
      alerts: Array<{ kind: string; state: string; host_name: string }>;
    };
    expect(listed.alerts.map((a) => [a.kind, a.state, a.host_name]).sort()).toEqual([
      ["check_failed", "open", "db-01"],
      ["prune_failed", "open", "db-01"],
    ]);
    const resolved = await s.admin.json("POST", `/api/alerts/${check.alert.id}/resolve`);
    expect(resolved.status).toBe(200);
    expect(await resolved.json()).toMatchObject({ alert: { id: check.alert.id } });
    expect((await s.admin.json("POST", `/api/alerts/${check.alert.id}/resolve`)).status).toBe(409);
    expect((await s.admin.json("POST", "/api/alerts/01JD0000000000000000000000/resolve")).status).toBe(404);
    const open = (await (await s.admin.json("GET", "/api/alerts?state=open")).json()) as {
      alerts: Array<{ kind: string }>;
    };
    expect(open.alerts.map((a) => a.kind)).toEqual(["prune_failed"]);
    const done = (await (await s.admin.json("GET", "/api/alerts?state=resolved")).json()) as {
      alerts: Array<{ kind: string; resolved_by: string }>;
    };
    expect(done.alerts).toEqual([
      expect.objectContaining({ kind: "check_failed", resolved_by: expect.any(String) }),
    ]);
    const bad = await s.admin.json("GET", "/api/alerts?state=closed");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/^state: /);
  });

  it("shows the alerts page with its filter and resolves from the page", async () => {
    const raised = await raiseAlert(
      s.deps,
      { hostId, kind: "backup_failed", dedupKey: "g1" },
      { message: "backup failed: <script>x</script>" },
      s.deps.clock.now(),
    );
    const html = await (await s.admin.request("/alerts")).text();
    expect(html).toContain("backup_failed");
    expect(html).toContain("&lt;script&gt;x&lt;/script&gt;");
    expect(html).toContain(`data-testid="resolve-${raised.alert.id}"`);
    const res = await s.admin.form(`/alerts/${raised.alert.id}/resolve`, { _csrf: csrfFrom(html) });
    expect(res.status).toBeLessThan(400);
    const [row] = await s.deps.db.select().from(alerts);
    expect(row?.resolvedAt).not.toBeNull();
    const after = await (await s.admin.request("/alerts?state=open")).text();
    expect(after).toContain("No open alerts");
    expect(await (await s.admin.request("/alerts?state=resolved")).text()).toContain("backup_failed");
  });
});

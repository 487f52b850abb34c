import { alerts } from "@fleetback/db";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { raiseAlert } from "../alerts/alerts.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps;
let admin: TestClient;
let hostId: string;

beforeEach(async () => {
  ({ deps, admin } = await startSignedInApp());
  hostId = (await seedHost(deps, { name: "db-01" })).host.id;
});
afterEach(async () => {
  await deps.close();
});

describe("alerts", () => {
  it("lists open alerts by default, filters by state, and resolves by hand once", async () => {
    const now = deps.clock.now();
    const check = await raiseAlert(
      deps,
      { hostId, kind: "check_failed", dedupKey: "" },
      { message: "check failed: repository contains errors" },
      now,
    );
    await raiseAlert(deps, { hostId, kind: "prune_failed", dedupKey: "" }, { message: "prune failed" }, now);
    const listed = (await (await admin.json("GET", "/api/alerts")).json()) as {
      alerts: Array<{ kind: string; state: string; host_name: string }>;
    };
    expect(listed.alerts.map((a) => [a.kind, a.state, a.host_name]).sort()).toEqual([
      ["check_failed", "open", "db-01"],
      ["prune_failed", "open", "db-01"],
    ]);
    const resolved = await admin.json("POST", `/api/alerts/${check.alert.id}/resolve`);
    expect(resolved.status).toBe(200);
    expect(await resolved.json()).toMatchObject({ alert: { id: check.alert.id } });
    expect((await admin.json("POST", `/api/alerts/${check.alert.id}/resolve`)).status).toBe(409);
    expect((await admin.json("POST", "/api/alerts/01JD0000000000000000000000/resolve")).status).toBe(404);
    const open = (await (await admin.json("GET", "/api/alerts?state=open")).json()) as {
      alerts: Array<{ kind: string }>;
    };
    expect(open.alerts.map((a) => a.kind)).toEqual(["prune_failed"]);
    const done = (await (await admin.json("GET", "/api/alerts?state=resolved")).json()) as {
      alerts: Array<{ kind: string; resolved_by: string }>;
    };
    expect(done.alerts).toEqual([
      expect.objectContaining({ kind: "check_failed", resolved_by: expect.any(String) }),
    ]);
    const bad = await admin.json("GET", "/api/alerts?state=closed");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/^state: /);
  });

  it("shows the alerts page with its filter and resolves from the page", async () => {
    const raised = await raiseAlert(
      deps,
      { hostId, kind: "backup_failed", dedupKey: "g1" },
      { message: "backup failed: <script>x</script>" },
      deps.clock.now(),
    );
    const html = await (await admin.request("/alerts")).text();
    expect(html).toContain("backup_failed");
    expect(html).toContain("&lt;script&gt;x&lt;/script&gt;");
    expect(html).toContain(`data-testid="resolve-${raised.alert.id}"`);
    const res = await admin.form(`/alerts/${raised.alert.id}/resolve`, { _csrf: csrfFrom(html) });
    expect(res.status).toBeLessThan(400);
    const [row] = await deps.db.select().from(alerts);
    expect(row?.resolvedAt).not.toBeNull();
    const after = await (await admin.request("/alerts?state=open")).text();
    expect(after).toContain("No open alerts");
    expect(await (await admin.request("/alerts?state=resolved")).text()).toContain("backup_failed");
  });
});

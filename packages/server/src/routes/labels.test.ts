/**
 * Host labels over the API (issue 37): read, replace and merge one host's, change many at once
 * by selector or ids with one audit entry holding the counts; every refusal names the field and
 * the label; viewers read but never change.
 */
import { auditLog } from "@fleetback/db";
import { eq, like } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { readHost, seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps | undefined;
afterEach(async () => {
  await deps?.close();
  deps = undefined;
});

async function setUp(): Promise<{
  deps: TestDeps;
  admin: TestClient;
  operator: TestClient;
  viewer: TestClient;
}> {
  const {
    deps: made,
    admin,
    users,
  } = await startSignedInApp({
    users: [
      { username: "operator", role: "operator" },
      { username: "viewer", role: "viewer" },
    ],
  });
  deps = made;
  return { deps: made, admin, ...users };
}

/** The audit entries of `action`, oldest first. */
function auditOf(deps: TestDeps, action: string) {
  return deps.db.select().from(auditLog).where(eq(auditLog.action, action)).orderBy(auditLog.id);
}

async function bodyOf(res: Response): Promise<{ message?: string } & Record<string, unknown>> {
  return (await res.json()) as { message?: string } & Record<string, unknown>;
}

describe("host labels API", () => {
  it("reads, replaces and merges a host's labels, auditing what changed", async () => {
    const { deps, operator, viewer } = await setUp();
    const { host } = await seedHost(deps, { name: "db-1" });
    expect(await bodyOf(await viewer.request(`/api/hosts/${host.id}/labels`))).toEqual({ labels: {} });

    let res = await operator.json("PUT", `/api/hosts/${host.id}/labels`, {
      labels: { env: "prod", role: "db" },
    });
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toEqual({ labels: { env: "prod", role: "db" } });
    deps.clock.advance(1000); // audit ids sort by time; one millisecond holds no order
    res = await operator.json("PATCH", `/api/hosts/${host.id}/labels`, {
      set: { env: "staging", zone: "" },
      remove: ["role"],
    });
    expect(await bodyOf(res)).toEqual({ labels: { env: "staging", zone: "" } });
    expect((await readHost(deps, host.id))?.labels).toEqual({ env: "staging", zone: "" });

    // The same labels again change nothing and write no audit entry.
    await operator.json("PUT", `/api/hosts/${host.id}/labels`, { labels: { env: "staging", zone: "" } });
    const entries = await auditOf(deps, "host.labels");
    expect(entries.map((entry) => entry.details)).toEqual([
      { set: { env: "prod", role: "db" }, removed: [] },
      { set: { env: "staging", zone: "" }, removed: ["role"] },
    ]);
    expect(entries[0]).toMatchObject({ targetKind: "host", targetId: host.id });
  });

  it("refuses bad labels naming the field and the label, and viewers", async () => {
    const { deps, admin, viewer } = await setUp();
    const { host } = await seedHost(deps, { name: "db-1" });
    const path = `/api/hosts/${host.id}/labels`;
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, "v"]));
    const refused: Array<[string, unknown, number, string]> = [
      ["PUT", { labels: { env: "pr od" } }, 400, 'labels.env: the value "pr od" of "env"'],
      ["PUT", { labels: { "-env": "prod" } }, 400, 'labels.-env: the key "-env"'],
      ["PUT", { labels: many }, 400, "labels:"],
      ["PUT", { labels: { env: 1 } }, 400, "labels.env:"],
      ["PUT", { labels: {}, extra: 1 }, 400, "extra:"],
      ["PATCH", { set: { env: "prod" }, remove: ["env"] }, 400, 'remove: "env" is also in set'],
      ["PATCH", {}, 400, "set: nothing to set or remove"],
      ["PATCH", { remove: ["bad key"] }, 400, 'remove.0: the key "bad key"'],
    ];
    for (const [method, body, status, message] of refused) {
      const res = await admin.json(method, path, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect((await bodyOf(res)).message, JSON.stringify(body)).toContain(message);
    }
    expect((await viewer.json("PUT", path, { labels: { env: "prod" } })).status).toBe(403);
    expect((await viewer.json("PATCH", path, { set: { env: "prod" } })).status).toBe(403);
    expect(
      (await viewer.json("POST", "/api/hosts/labels", { selector: "x", set: { env: "prod" } })).status,
    ).toBe(403);
    expect((await admin.json("PUT", "/api/hosts/nope/labels", { labels: {} })).status).toBe(404);
    expect((await readHost(deps, host.id))?.labels).toEqual({});
  });

  it("changes many hosts by selector or ids in one audited action, all or nothing", async () => {
    const { deps, operator } = await setUp();
    const web = await seedHost(deps, { name: "web-1", labels: { env: "prod", role: "web" } });
    const db = await seedHost(deps, { name: "db-1", labels: { env: "prod", role: "db" } });
    const dev = await seedHost(deps, { name: "dev-1", labels: { env: "dev", role: "db", staging: "" } });

    let res = await operator.json("POST", "/api/hosts/labels", {
      selector: "env=prod, role in (db,web), !staging",
      set: { tier: "gold" },
      remove: ["role"],
    });
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toEqual({ matched: 2, changed: 2, not_found: [] });
    expect((await readHost(deps, web.host.id))?.labels).toEqual({ env: "prod", tier: "gold" });
    expect((await readHost(deps, db.host.id))?.labels).toEqual({ env: "prod", tier: "gold" });
    expect((await readHost(deps, dev.host.id))?.labels).toEqual({ env: "dev", role: "db", staging: "" });

    deps.clock.advance(1000); // audit ids sort by time; one millisecond holds no order
    res = await operator.json("POST", "/api/hosts/labels", {
      host_ids: [web.host.id, dev.host.id, "gone"],
      set: { tier: "gold" },
    });
    expect(await bodyOf(res)).toEqual({ matched: 2, changed: 1, not_found: ["gone"] });

    const bulk = await auditOf(deps, "hosts.labels_bulk");
    expect(bulk.map((entry) => entry.details)).toEqual([
      {
        selector: "env=prod,role in (db,web),!staging",
        set: { tier: "gold" },
        remove: ["role"],
        matched: 2,
        changed: 2,
      },
      { host_ids: 3, set: { tier: "gold" }, remove: [], matched: 2, changed: 1 },
    ]);
    expect(await deps.db.select().from(auditLog).where(like(auditLog.action, "host.labels%"))).toHaveLength(
      0,
    );

    // One host over the limit refuses the whole change: the other hosts keep their labels.
    const full = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, "v"]));
    await seedHost(deps, { name: "full-1", labels: { ...full, tier: "gold" } });
    res = await operator.json("POST", "/api/hosts/labels", { selector: "tier=gold", set: { extra: "x" } });
    expect(res.status).toBe(400);
    expect((await bodyOf(res)).message).toBe(
      "set: would leave host full-1 with 34 labels; a host has at most 32",
    );
    expect((await readHost(deps, web.host.id))?.labels).toEqual({ env: "prod", tier: "gold" });
  });

  it("refuses a bulk action without exactly one target, or with a bad selector, naming it", async () => {
    const { operator } = await setUp();
    const refused: Array<[unknown, string]> = [
      [{ set: { a: "b" } }, "selector: give either selector or host_ids"],
      [{ selector: "a", host_ids: ["x"], set: { a: "b" } }, "selector: give either selector or host_ids"],
      [{ selector: "  ", set: { a: "b" } }, "selector: is empty and would match every host"],
      [{ selector: "env=prod role=db", set: { a: "b" } }, 'selector: at position 10 ("role")'],
      [{ selector: "env in (a", set: { a: "b" } }, "selector: at position 10 (end of selector)"],
      [{ host_ids: [], set: { a: "b" } }, "host_ids:"],
    ];
    for (const [body, message] of refused) {
      const res = await operator.json("POST", "/api/hosts/labels", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await bodyOf(res)).message, JSON.stringify(body)).toContain(message);
    }
  });

  it("filters the host list by selector (API and page), shows labels as chips, and keeps the selector in the tabs", async () => {
    const { deps, viewer } = await setUp();
    await seedHost(deps, { name: "web-1", labels: { env: "prod", role: "web" }, status: "online" });
    await seedHost(deps, { name: "db-1", labels: { env: "prod", role: "db" } });
    await seedHost(deps, { name: "dev-1", labels: { env: "dev" } });
    const listed = await bodyOf(await viewer.request("/api/hosts?selector=env%3Dprod%2C!staging"));
    expect((listed.hosts as Array<{ name: string }>).map((host) => host.name)).toEqual(["db-1", "web-1"]);
    expect(listed).toMatchObject({ total: 2, selector: "env=prod,!staging" });
    expect((listed.hosts as Array<{ labels: unknown }>)[0]?.labels).toEqual({ env: "prod", role: "db" });
    const online = await bodyOf(await viewer.request("/api/hosts?selector=env%3Dprod&state=online"));
    expect((online.hosts as Array<{ name: string }>).map((host) => host.name)).toEqual(["web-1"]);

    const page = await (await viewer.request("/hosts?selector=role+in+(db)")).text();
    expect(page).toContain("db-1");
    expect(page).not.toContain(">web-1<");
    expect(page).toContain('<code class="label-chip" data-testid="label-chip">role=db</code>');
    expect(page).toContain('value="role in (db)"');
    expect(page).toContain('href="/hosts?state=online&amp;selector=role+in+%28db%29"');

    const bad = await viewer.request("/api/hosts?selector=env%3Dprod+role");
    expect(bad.status).toBe(400);
    expect((await bodyOf(bad)).message).toContain('selector: at position 10 ("role")');
  });

  it("shows labels on the host page and saves them from its form; viewers see no form", async () => {
    const { deps, operator, viewer } = await setUp();
    const { host } = await seedHost(deps, { name: "db-1", labels: { env: "prod" } });
    const page = await (await operator.request(`/hosts/${host.id}`)).text();
    expect(page).toContain('data-testid="label-chip">env=prod<');
    expect(page).toContain('value="env=prod"');
    const seen = await (await viewer.request(`/hosts/${host.id}`)).text();
    expect(seen).toContain('data-testid="label-chip">env=prod<');
    expect(seen).not.toContain('data-testid="labels-form"');
    const csrf = csrfFrom(page);
    const saved = await operator.form(`/hosts/${host.id}/labels`, {
      _csrf: csrf,
      labels: "role=db, tier=gold",
    });
    expect(saved.status).toBe(303);
    expect((await readHost(deps, host.id))?.labels).toEqual({ role: "db", tier: "gold" });
    const bad = await operator.form(`/hosts/${host.id}/labels`, { _csrf: csrf, labels: "role=d b" });
    expect(bad.status).toBe(400);
    expect((await bodyOf(bad)).message).toContain('labels: the value "d b" of "role"');
    const viewerCsrf = csrfFrom(seen);
    expect((await viewer.form(`/hosts/${host.id}/labels`, { _csrf: viewerCsrf, labels: "" })).status).toBe(
      403,
    );
    expect((await readHost(deps, host.id))?.labels).toEqual({ role: "db", tier: "gold" });
  });
});

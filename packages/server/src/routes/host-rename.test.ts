/**
 * Renaming a host (issue 35): by API and from the host page, validated as an enrolled name is,
 * unique in the fleet regardless of case, audited as host.rename with the old and new name, and
 * followed by the in-place restore confirmation, which then asks for the new name.
 */
import { auditLog } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { readHost, seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps | undefined;
afterEach(async () => {
  await deps?.close();
  deps = undefined;
});

async function setUp(): Promise<{ deps: TestDeps; admin: TestClient; viewer: TestClient }> {
  const {
    deps: made,
    admin,
    users,
  } = await startSignedInApp({ users: [{ username: "looker", role: "viewer" }] });
  deps = made;
  return { deps: made, admin, viewer: users.looker };
}

describe("renaming a host", () => {
  it("renames by API, refuses bad and taken names naming the field, and audits old and new", async () => {
    const { deps, admin, viewer } = await setUp();
    const { host } = await seedHost(deps, { name: "web-1" });
    await seedHost(deps, { name: "db-1" });

    const refused: Array<[unknown, number, string]> = [
      [{ name: "" }, 400, "name:"],
      [{ name: "x".repeat(254) }, 400, "name:"],
      [{ name: "bad\nname" }, 400, "name: may not contain control characters"],
      [{ name: " web-2" }, 400, "name: may not start or end with a space"],
      [{ name: "DB-1" }, 409, "name: another host is already named DB-1"],
      [{ name: "web-2", extra: 1 }, 400, "extra:"],
    ];
    for (const [body, status, message] of refused) {
      const res = await admin.json("PATCH", `/api/hosts/${host.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(JSON.stringify(await res.json())).toContain(message);
    }
    expect((await viewer.json("PATCH", `/api/hosts/${host.id}`, { name: "web-2" })).status).toBe(403);
    expect((await admin.json("PATCH", "/api/hosts/nope", { name: "web-2" })).status).toBe(404);

    const res = await admin.json("PATCH", `/api/hosts/${host.id}`, { name: "web-2" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ host: { id: host.id, name: "web-2" } });
    const after = await readHost(deps, host.id);
    expect(after?.name).toBe("web-2");
    expect(after?.resticHost).toBe(host.resticHost);
    const entries = await deps.db.select().from(auditLog).where(eq(auditLog.action, "host.rename"));
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      targetKind: "host",
      targetId: host.id,
      details: { from: "web-1", to: "web-2" },
    });
  });

  it("renames from the host page, and the in-place restore then asks for the new name", async () => {
    const { deps, admin, viewer } = await setUp();
    const { host } = await seedHost(deps, { name: "web-1" });
    const page = await (await admin.request(`/hosts/${host.id}`)).text();
    expect(page).toContain('data-testid="rename-host"');
    expect(await (await viewer.request(`/hosts/${host.id}`)).text()).not.toContain("rename-host");

    const posted = await admin.form(`/hosts/${host.id}/rename`, {
      _csrf: csrfFrom(page),
      name: "web-renamed",
    });
    expect(posted.status).toBe(303);
    expect(posted.headers.get("Location")).toBe(`/hosts/${host.id}`);
    const renamed = await (await admin.request(`/hosts/${host.id}`)).text();
    expect(renamed).toContain('<h1 data-testid="host-name">web-renamed</h1>');

    const snapshot = "ab".repeat(32);
    await replaceSnapshots(deps.db, host.id, {
      refreshed_at: "2026-11-21T11:00:00Z",
      snapshots: [
        {
          id: snapshot,
          short_id: snapshot.slice(0, 8),
          time: "2026-11-21T10:00:00Z",
          hostname: host.resticHost,
          paths: ["/srv"],
          tags: [],
          size_bytes: 1,
          file_count: 1,
        },
      ],
    });
    const inPlace = { snapshot_id: snapshot, paths: ["/srv"], in_place: true };
    const old = await admin.json("POST", `/api/hosts/${host.id}/restore`, {
      ...inPlace,
      confirm_hostname: "web-1",
    });
    expect(old.status).toBe(400);
    expect(JSON.stringify(await old.json())).toContain("type the host name web-renamed to confirm");
  });
});

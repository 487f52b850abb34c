/**
 * Issue 38.3 in the browser's terms: the search page lists one line per version with the hosts
 * that were not searched, the version history lists each version's snapshots, and "Restore this
 * version" opens the restore wizard with that snapshot and path chosen.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyCatalogPart } from "../catalog/catalog-apply.js";
import { delta, entry, reportSnapshots, seedGroup, snapshotIdOf } from "../catalog/catalog-test-support.js";
import { seedHost } from "../testing/seed.js";
import { type SignedInApp, startSignedInApp } from "../testing/signed-in-app.js";

let signed: SignedInApp;
let webId: string;

beforeEach(async () => {
  signed = await startSignedInApp({ users: [{ username: "looker", role: "viewer" }] });
  const { db } = signed.deps;
  webId = (await seedHost(signed.deps, { name: "web" })).host.id;
  await seedGroup(db, webId);
  await applyCatalogPart(
    db,
    webId,
    delta(0, { changed: [entry("/etc/ssh/id_rsa", 1600), entry("/etc/hosts", 9)] }),
  );
  await applyCatalogPart(db, webId, delta(1));
  await applyCatalogPart(db, webId, delta(2, { changed: [entry("/etc/ssh/id_rsa", 1700, 2)] }));
  await reportSnapshots(db, webId, [0, 1, 2]);
  await seedHost(signed.deps, { name: "fresh" });
});
afterEach(async () => {
  await signed.deps.close();
});

describe("search pages", () => {
  it("finds the versions, folds unchanged ones, and names the hosts not searched", async () => {
    // As the form sends it: blank fields are no filter.
    const res = await signed.admin.request("/search?q=ID_RSA&selector=&groups=&from=&to=");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html.match(/data-testid="search-hit"/g)).toHaveLength(2);
    expect(html).toMatch(/data-testid="search-hit-snapshots">2 snapshots, /);
    expect(html).toContain(`href="/hosts/${webId}/versions?path=%2Fetc%2Fssh%2Fid_rsa"`);
    expect(html).toMatch(/data-testid="search-not-catalogued">[^<]*<a href="\/hosts\/[^"]+">fresh<\/a>/);

    const none = await (await signed.admin.request("/search?q=no-such-file")).text();
    expect(none).toContain('data-testid="search-empty"');
    const bad = await signed.admin.request("/search?q=%2Fetc%2F");
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/data-testid="field-error-q">ends with \//);
    // File names say a lot: a viewer may not search.
    expect((await signed.users.looker?.request("/search?q=id_rsa"))?.status).toBe(403);
  });

  it("lists a path's versions and restores one through the wizard, its snapshot and path chosen", async () => {
    const html = await (
      await signed.admin.request(`/hosts/${webId}/versions?path=%2Fetc%2Fssh%2Fid_rsa`)
    ).text();
    expect(html.match(/data-testid="version"/g)).toHaveLength(2);
    expect(html.match(/data-testid="version-snapshot"/g)).toHaveLength(3);
    const older = `/hosts/${webId}/restore?snapshot_id=${snapshotIdOf(1)}&amp;path=%2Fetc%2Fssh%2Fid_rsa`;
    expect(html).toContain(older);
    const wizard = await (await signed.admin.request(older.replaceAll("&amp;", "&"))).text();
    expect(wizard).toMatch(
      /data-testid="restore-selected">\s*<li><label><input type="checkbox" name="paths" value="\/etc\/ssh\/id_rsa" checked>/,
    );
    const missing = await (await signed.admin.request(`/hosts/${webId}/versions?path=%2Fnope`)).text();
    expect(missing).toContain('data-testid="versions-empty"');
    expect((await signed.admin.request(`/hosts/${webId}/versions?path=relative`)).status).toBe(400);
  });
});

/**
 * Issue 37.1 on the host list: filtered by a selector, an operator sets and removes labels on
 * every host it matches (not only the page's) with the list's form, and is told how many matched
 * and changed; an empty selector and a bad key are refused at their inputs with what was typed
 * kept, changing nothing; a viewer gets no form and cannot post it. On both engines.
 */
import { runDbSuite } from "@fleetback/db/testing";
import { expect, it } from "vitest";
import { closingAfter } from "../testing/closing-after.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

const PROD = `/hosts?selector=${encodeURIComponent("env=prod")}`;

runDbSuite("bulk labels from the host list", (getDb) => {
  async function setUp() {
    const started = await startSignedInApp({
      deps: { db: getDb() },
      users: [
        { username: "olga", role: "operator" },
        { username: "vic", role: "viewer" },
      ],
    });
    const ids: Record<string, string> = {};
    for (const [name, labels] of [
      ["web-1", { env: "prod", old: "x" }],
      ["web-2", { env: "prod", tier: "gold" }],
      ["dev-1", { env: "dev", old: "x" }],
    ] as const) {
      ids[name] = (await seedHost(started.deps, { name, labels })).host.id;
    }
    return { ...started, ids };
  }

  async function labelsOf(client: TestClient, id: string | undefined): Promise<Record<string, string>> {
    const res = await client.request(`/api/hosts/${id}/labels`);
    return ((await res.json()) as { labels: Record<string, string> }).labels;
  }

  async function post(deps: TestDeps, client: TestClient, fields: Record<string, string>) {
    const csrf = csrfFrom(await (await client.request(PROD)).text());
    return client.form(
      "/hosts/labels",
      { _csrf: csrf, ...fields },
      { Accept: "text/html", Referer: `${deps.config.baseUrl}${PROD}` },
    );
  }

  /** Posts the form, expects it refused (400, the form again) and returns that page. */
  async function refusedPost(deps: TestDeps, client: TestClient, fields: Record<string, string>) {
    const res = await post(deps, client, fields);
    expect(res.status).toBe(400);
    return res.text();
  }

  it("sets and removes labels on every matched host and says how many matched and changed", async () => {
    await closingAfter(setUp(), async ({ deps, users, admin, ids }) => {
      const olga = users.olga as TestClient;
      const page = await (await olga.request(PROD)).text();
      expect(page).toContain('data-testid="bulk-labels-form"');
      expect(page).toMatch(/name="selector" value="env=prod" readonly/);
      const res = await post(deps, olga, { selector: "env=prod", set: "tier=gold\nteam=web", remove: "old" });
      expect(res.status).toBe(303);
      const location = res.headers.get("Location") ?? "";
      expect(location).toBe("/hosts?selector=env%3Dprod&labels_matched=2&labels_changed=2");
      expect(await labelsOf(admin, ids["web-1"])).toEqual({ env: "prod", tier: "gold", team: "web" });
      expect(await labelsOf(admin, ids["web-2"])).toEqual({ env: "prod", tier: "gold", team: "web" });
      expect(await labelsOf(admin, ids["dev-1"])).toEqual({ env: "dev", old: "x" });
      const after = await (await olga.request(location)).text();
      expect(after).toMatch(/data-testid="labels-outcome">Labels changed: 2 matched, 2 changed\./);

      // The same change again matches both and changes neither.
      const again = await post(deps, olga, { selector: "env=prod", set: "tier=gold", remove: "" });
      expect(again.headers.get("Location")).toBe(
        "/hosts?selector=env%3Dprod&labels_matched=2&labels_changed=0",
      );
    });
  });

  it("refuses an empty selector and a bad key at their inputs, keeping what was typed and changing nothing", async () => {
    await closingAfter(setUp(), async ({ deps, users, admin, ids }) => {
      const olga = users.olga as TestClient;
      const emptyHtml = await refusedPost(deps, olga, { selector: " ", set: "tier=silver", remove: "" });
      expect(emptyHtml).toMatch(
        /<small class="field-error" id="error-selector" data-testid="field-error-selector">is empty and would match every host<\/small>/,
      );
      expect(emptyHtml).toContain(">tier=silver</textarea>");

      const badHtml = await refusedPost(deps, olga, {
        selector: "env=prod",
        set: "tier=silver, bad key=1",
        remove: "",
      });
      expect(badHtml).toContain('data-testid="field-error-set"');
      // The form is folded away on the page; refused, it comes back unfolded.
      expect(badHtml).toContain('<details class="fleet-bulk-labels" data-testid="bulk-labels" open>');
      expect(badHtml).toMatch(/name="set"[^>]*aria-invalid="true"/);
      expect(badHtml).toContain("the key &quot;bad key&quot; may hold only letters");
      expect(badHtml).toContain("tier=silver, bad key=1</textarea>");

      expect(await refusedPost(deps, olga, { selector: "env=prod", set: "", remove: "ok, -no" })).toMatch(
        /data-testid="field-error-remove">item 2: the key &quot;-no&quot;/,
      );

      expect(await labelsOf(admin, ids["web-1"])).toEqual({ env: "prod", old: "x" });
      expect(await labelsOf(admin, ids["web-2"])).toEqual({ env: "prod", tier: "gold" });
    });
  });

  it("gives a viewer no form and refuses its post", async () => {
    await closingAfter(setUp(), async ({ users, admin, ids }) => {
      const vic = users.vic as TestClient;
      const page = await (await vic.request(PROD)).text();
      expect(page).not.toContain('data-testid="bulk-labels-form"');
      const res = await vic.form("/hosts/labels", {
        _csrf: csrfFrom(page),
        selector: "env=prod",
        set: "tier=x",
      });
      expect(res.status).toBe(403);
      expect(await labelsOf(admin, ids["web-1"])).toEqual({ env: "prod", old: "x" });
    });
  });
});

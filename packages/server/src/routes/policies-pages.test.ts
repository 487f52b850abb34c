/**
 * Issue 37.3 in the browser's terms: a policy is previewed before it applies (hosts covered and
 * what changes on each), applied as previewed, edited as a new version with its changes listed,
 * rolled back; a viewer reads it all and changes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps;
let admin: TestClient;
let viewer: TestClient;

const SPEC = {
  groups: [{ name: "etc", includes: ["/etc"], retention_policy: { daily: 7 } }],
  schedules: [{ name: "nightly", cron: "0 2 * * *", groups: ["etc"] }],
};

beforeEach(async () => {
  const started = await startSignedInApp({ users: [{ username: "looker", role: "viewer" }] });
  ({ deps, admin } = started);
  viewer = started.users.looker;
  await seedHost(deps, { name: "web-1", labels: { env: "prod" } });
  await seedHost(deps, { name: "web-2", labels: { env: "prod" } });
  await seedHost(deps, { name: "dev-1", labels: { env: "dev" } });
});
afterEach(async () => {
  await deps.close();
});

async function post(path: string, fields: Record<string, string>, from: string): Promise<Response> {
  const csrf = csrfFrom(await (await admin.request(from)).text());
  return admin.form(
    path,
    { _csrf: csrf, ...fields },
    { Accept: "text/html", Referer: `${deps.config.baseUrl}${from}` },
  );
}

describe("policy pages", () => {
  it("previews a new policy, applies what was previewed, then edits, lists the change and rolls back", async () => {
    const fields = {
      name: "prod",
      selector: "env=prod",
      priority: "100",
      spec: JSON.stringify(SPEC),
      note: "",
    };
    const preview = await (await post("/policies/preview", fields, "/policies")).text();
    expect(preview).toMatch(
      /data-testid="preview-counts">It covers <strong>2<\/strong> hosts; <strong>2<\/strong> change/,
    );
    expect(preview.match(/data-testid="preview-host"/g)).toHaveLength(2);
    expect(preview).toContain("+ etc");
    expect(preview).toContain("+ prod/nightly");
    // Nothing applied by the preview.
    expect(await (await viewer.request("/policies")).text()).toContain("No policies");

    const applied = await post("/policies", fields, "/policies");
    expect(applied.status).toBe(303);
    const page = applied.headers.get("Location") ?? "";
    const shown = await (await viewer.request(page)).text();
    expect(shown).toMatch(/Version 1 · priority 100 · covers <a [^>]*>2 hosts<\/a>/);
    expect(shown).not.toContain('data-testid="policy-form"');

    const edit = {
      ...fields,
      spec: JSON.stringify({ ...SPEC, groups: [{ ...SPEC.groups[0], excludes: ["*.tmp"] }] }),
      note: "skip temp files",
    };
    const editPreview = await (await post(`${page}/preview`, edit, page)).text();
    expect(editPreview).toContain("~ etc (excludes)");
    expect(editPreview).toContain("Apply as version 2");
    expect((await post(page, edit, page)).status).toBe(303);
    const second = await (await admin.request(page)).text();
    expect(second).toMatch(/<strong>Version 2<\/strong>, <time[^>]*>[^<]*<\/time>: skip temp files/);
    expect(second).toContain("spec.groups[&quot;etc&quot;].excludes");

    expect((await post(`${page}/versions/1/rollback`, {}, page)).status).toBe(303);
    const third = await (await admin.request(page)).text();
    expect(third).toContain("Version 3 · priority 100");
    expect(third).toContain("rollback to version 1");
  });

  it("says what is wrong with the document at its input and keeps it", async () => {
    const res = await post(
      "/policies/preview",
      {
        name: "prod",
        selector: "env=prod",
        priority: "100",
        spec: '{"groups":[{"name":"etc","includes":["etc"]}]}',
      },
      "/policies",
    );
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toMatch(/data-testid="field-error-spec"[^>]*>spec\.groups\.0\.includes\.0: /);
  });

  it("takes the document as YAML, shows a policy's document as YAML, and names where bad YAML broke", async () => {
    const yaml = [
      "groups:",
      "  - name: etc",
      "    includes: [/etc]",
      "    retention_policy: { daily: 7 }",
      "schedules:",
      "  - { name: nightly, cron: 0 2 * * *, groups: [etc] }",
      "",
    ].join("\n");
    const fields = { name: "prod", selector: "env=prod", priority: "100", spec: yaml, note: "" };
    const applied = await post("/policies", fields, "/policies");
    expect(applied.status).toBe(303);
    const page = applied.headers.get("Location") ?? "";
    const { policy } = (await (await admin.json("GET", `/api${page}`)).json()) as {
      policy: { spec: unknown };
    };
    expect(policy.spec).toEqual({
      ...SPEC,
      groups: [{ ...SPEC.groups[0], has_pre_hook: false, has_post_hook: false }],
    });
    const shown = await (await admin.request(page)).text();
    const textarea = /data-testid="policy-spec">([^<]*)<\/textarea>/.exec(shown)?.[1] ?? "";
    expect(textarea).toContain("groups:\n  - name: etc");
    expect(textarea).not.toContain("{");

    const broken = await post(`${page}/preview`, { ...fields, spec: "groups:\n  - name: [etc\n" }, page);
    expect(broken.status).toBe(400);
    expect(await broken.text()).toMatch(
      /data-testid="field-error-spec"[^>]*>not YAML: [^<]* at line \d+, column \d+/,
    );
  });

  it("takes a group's hook from the document, shows only that it is there, and keeps it when the shown document comes back", async () => {
    const canary = "echo canary-page-hook-31c7 && systemctl stop app";
    const spec = { ...SPEC, groups: [{ ...SPEC.groups[0], pre_hook: canary }] };
    const fields = {
      name: "prod",
      selector: "env=prod",
      priority: "100",
      spec: JSON.stringify(spec),
      note: "",
    };
    // The preview answers the admin's own POST with the document it previewed, to apply exactly
    // that: the only page that holds the text. Every page read afterwards shows it as set.
    expect((await post("/policies/preview", fields, "/policies")).status).toBe(200);
    const applied = await post("/policies", fields, "/policies");
    expect(applied.status).toBe(303);
    const page = applied.headers.get("Location") ?? "";
    const shown = await (await admin.request(page)).text();
    expect(shown).not.toContain("canary-page-hook");
    expect(shown).toMatch(/data-testid="policy-hooks-etc">before</);
    // The form holds the document without the hook; sent back with a change, the hook stays.
    const textarea = /data-testid="policy-spec">([^<]*)<\/textarea>/.exec(shown)?.[1] ?? "";
    expect(textarea).not.toContain("pre_hook");
    const again = { ...fields, spec: textarea.replaceAll("&quot;", '"').replace("daily: 7", "daily: 9") };
    const editPreview = await (await post(`${page}/preview`, again, page)).text();
    expect(editPreview).toContain("~ etc (retention_policy)");
    expect((await post(page, again, page)).status).toBe(303);
    const second = await (await admin.request(page)).text();
    expect(second).not.toContain("canary-page-hook");
    expect(second).toMatch(/data-testid="policy-hooks-etc">before</);
    // On the host's page the hook is the host's like any other: its text only in an admin's edit form.
    const listed = (await (await admin.json("GET", "/api/hosts")).json()) as {
      hosts: Array<{ id: string; name: string }>;
    };
    const web = listed.hosts.find((h) => h.name === "web-1");
    expect(await (await viewer.request(`/hosts/${web?.id}/sources`)).text()).not.toContain(
      "canary-page-hook",
    );
    expect(await (await admin.request(`/hosts/${web?.id}/sources`)).text()).toContain(
      "canary-page-hook-31c7 &amp;&amp; systemctl stop app</textarea>",
    );
  });
});

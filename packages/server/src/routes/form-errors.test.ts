/**
 * Forms that say what is wrong where it is wrong (issue 35.7), in-process on both engines: the
 * enrol form refused for a relative path comes back with the message at that input, a summary,
 * and every typed value (the repository password too, in a response no cache keeps); an htmx
 * form's refusal names its field for the page script; the password rules the server checks are
 * on the users, account and first-admin pages before anyone fails them.
 */
import type { Database } from "@fleetback/db";
import { enrolmentTokens } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { expect, it } from "vitest";
import { createApp } from "../app.js";
import { PASSWORD_RULES } from "../auth/users.js";
import { closingAfter } from "../testing/closing-after.js";
import { createTestClient, csrfFrom, type TestClient } from "../testing/http.js";
import { signInOn } from "../testing/signed-in-app.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";

const PASSWORD = "correct horse battery";
const SLOW = 120_000;

async function setup(db: Database): Promise<{ deps: TestDeps; admin: TestClient }> {
  const deps = await createTestDeps({ db });
  // Read before the first admin exists: afterwards the page is gone.
  const bootstrapPage = await createTestClient(createApp(deps), deps.config.baseUrl).request("/bootstrap");
  const rules = await bootstrapPage.text();
  for (const entry of PASSWORD_RULES) {
    expect(rules).toContain(entry.rule);
  }
  const { admin } = await signInOn(deps, { adminName: "root" });
  return { deps, admin };
}

runDbSuite("form errors at their fields", (getDb) => {
  it(
    "gives the enrol form back with the error at the relative path and every input kept",
    async () => {
      await closingAfter(setup(getDb()), async ({ deps, admin }) => {
        const csrf = csrfFrom(await (await admin.request("/enroll")).text());
        const typed = {
          repository_url: "rest:https://backup.example.org:8000/web-01/",
          repository_username: "web-01",
          repository_password: 'sw0rd&"<fish>',
          initial_paths: "/etc\nhome/alice",
        };
        const res = await admin.form("/enroll", { _csrf: csrf, ...typed }, { Accept: "text/html" });
        expect(res.status).toBe(400);
        expect(res.headers.get("Cache-Control")).toBe("no-store");
        const html = await res.text();
        expect(html).toContain('data-testid="mint-form"');
        expect(html).not.toContain("<h1>Bad request</h1>");
        expect(html).toMatch(
          /<textarea name="initial_paths" id="field-initial_paths"[^>]* aria-invalid="true" aria-describedby="error-initial_paths">\/etc\nhome\/alice<\/textarea>/,
        );
        expect(html).toMatch(
          /<small class="field-error" id="error-initial_paths"[^>]*>&quot;home\/alice&quot; is not an absolute path<\/small>/,
        );
        expect(html).toMatch(
          /data-testid="form-error-summary"[\s\S]*href="#field-initial_paths">Initial paths<\/a>/,
        );
        expect(html).toContain('value="rest:https://backup.example.org:8000/web-01/"');
        expect(html).toContain('name="repository_username" id="field-repository_username" value="web-01"');
        expect(html).toContain('type="password" value="sw0rd&amp;&quot;&lt;fish&gt;"');
        expect(await getDb().select().from(enrolmentTokens)).toHaveLength(0);
        expect(deps.logLines.join("\n")).not.toContain("sw0rd");

        // Fixed, the same form mints and no longer shows the typed password back.
        const fixed = await admin.form("/enroll", {
          _csrf: csrf,
          ...typed,
          initial_paths: "/etc\n/home/alice",
        });
        expect(fixed.status).toBe(200);
        const minted = await fixed.text();
        expect(minted).toContain('data-testid="minted"');
        expect(minted).not.toContain("sw0rd");
        expect(minted).not.toContain("aria-invalid");
      });
    },
    SLOW,
  );

  it(
    "names the refused field of an htmx form, and shows the password rules up front",
    async () => {
      await closingAfter(setup(getDb()), async ({ admin }) => {
        const users = await (await admin.request("/settings/users")).text();
        for (const entry of PASSWORD_RULES) {
          expect(users).toContain(entry.rule);
        }
        expect(users).toMatch(/name="password" type="password"[^>]*aria-describedby="password-rules-new"/);
        const account = await (await admin.request("/account/password")).text();
        for (const entry of PASSWORD_RULES) {
          expect(account).toContain(entry.rule);
        }

        const res = await admin.form(
          "/settings/users",
          { _csrf: csrfFrom(users), username: "alice", password: "alice-long-password", role: "viewer" },
          { "HX-Request": "true" },
        );
        expect(res.status).toBe(400);
        expect(JSON.parse(res.headers.get("HX-Trigger") ?? "{}")).toEqual({
          "fleetback:toast": {
            level: "error",
            message: "password: must not contain the username",
            fields: [{ field: "password", message: "must not contain the username" }],
          },
        });

        // A conflict that names its field reaches the field too.
        const taken = await admin.form(
          "/settings/users",
          { _csrf: csrfFrom(users), username: "root", password: PASSWORD, role: "viewer" },
          { "HX-Request": "true" },
        );
        expect(taken.status).toBe(409);
        expect(JSON.parse(taken.headers.get("HX-Trigger") ?? "{}")["fleetback:toast"].fields).toEqual([
          { field: "username", message: '"root" is already taken' },
        ]);
      });
    },
    SLOW,
  );
});

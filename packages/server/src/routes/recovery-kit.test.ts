/**
 * The recovery kit (issue 35, point 9) through the app on both engines: only an admin who just
 * proved who they are gets it, a refusal is audited, the export is audited without a value, the
 * answer is never cached, and the values are the ones restic needs (the login merged into the
 * URL as the agent merges it). Running the kit's script on a real repository is in
 * recovery/kit-script-restic.test.ts.
 */

import { auditLog, users } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { like } from "drizzle-orm";
import { expect, it } from "vitest";
import type { createApp } from "../app.js";
import { createSession, SESSION_COOKIE } from "../auth/sessions.js";
import { SSO_SIGN_IN_PATH } from "../auth/step-up.js";
import { closingAfter } from "../testing/closing-after.js";
import { createTestClient, csrfFrom, type TestClient } from "../testing/http.js";
import { bindCredentials, seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";
import { SSO_START_PATH } from "./sso-pages.js";

const PASSWORD = "correct horse battery";
const REPO_CANARY = "Canary-Kit-Repo-7731";
const LOGIN_CANARY = "Canary-Kit-Login-3318";
const ADMIN_CANARY = "Canary-Kit-Admin-5120";
const MIRROR_CANARY = "Canary-Kit-Mirror-8846";
const CANARIES = [REPO_CANARY, LOGIN_CANARY, ADMIN_CANARY, MIRROR_CANARY, PASSWORD];

interface Setup {
  deps: TestDeps;
  app: ReturnType<typeof createApp>;
  admin: TestClient;
  hostId: string;
}

async function setUp(getDb: () => TestDeps["db"]): Promise<Setup> {
  const { deps, app, admin } = await startSignedInApp({ deps: { db: getDb() } });
  const { host } = await seedHost(deps, { name: "web-1", resticHost: "web-1-kit", toolVersion: "0.18.0" });
  await bindCredentials(deps, host.id, {
    repo: {
      url: "rest:http://127.0.0.1:8000/web-1/",
      username: "web-1",
      password: REPO_CANARY,
      login_password: LOGIN_CANARY,
    },
    admin: { url: "rest:http://127.0.0.1:8000/web-1/", username: "web-1-admin", password: ADMIN_CANARY },
    mirror: { url: "/srv/mirror/web-1", password: MIRROR_CANARY },
  });
  return { deps, app, admin, hostId: host.id };
}

/** Sorted by action then details: rows written within one millisecond have no order of their own. */
async function auditRows(deps: TestDeps) {
  const rows = await deps.db.select().from(auditLog).where(like(auditLog.action, "recovery_kit.%"));
  const key = (row: (typeof rows)[number]) => `${row.action} ${JSON.stringify(row.details)}`;
  return rows.sort((a, b) => key(a).localeCompare(key(b)));
}

function expectNoSecret(text: string): void {
  for (const canary of CANARIES) {
    expect(text).not.toContain(canary);
  }
}

runDbSuite("recovery kit routes", (getDb) => {
  it("needs the admin's password again; a missing or wrong one is refused and audited as such", async () => {
    await closingAfter(setUp(getDb), async ({ deps, admin, hostId }) => {
      const missing = await admin.json("POST", `/api/hosts/${hostId}/recovery-kit`, {});
      expect(missing.status).toBe(403);
      expect(missing.headers.get("cache-control")).toBe("no-store");
      expect(((await missing.json()) as { message: string }).message).toMatch(/^password: /);
      const wrong = await admin.json("POST", `/api/hosts/${hostId}/recovery-kit`, {
        password: "not my password",
      });
      expect(wrong.status).toBe(403);
      const wrongText = await wrong.text();
      expect(JSON.parse(wrongText).message).toBe("password: is wrong");
      expectNoSecret(wrongText);
      expect(wrongText).not.toContain("not my password");

      const rows = await auditRows(deps);
      expect(rows.map((row) => [row.action, row.targetId, row.details])).toEqual([
        ["recovery_kit.export_refused", hostId, { scope: "host", reason: "password_missing" }],
        ["recovery_kit.export_refused", hostId, { scope: "host", reason: "wrong_password" }],
      ]);
      expectNoSecret(deps.logLines.join("\n"));
      expect(deps.logLines.join("\n")).not.toContain("not my password");
    });
  });

  it("stops password guesses after ten, even a right one, until the window passes", async () => {
    await closingAfter(setUp(getDb), async ({ deps, admin, hostId }) => {
      for (let i = 0; i < 10; i++) {
        const guess = await admin.json("POST", `/api/hosts/${hostId}/recovery-kit`, {
          password: `guess ${i}`,
        });
        expect(guess.status).toBe(403);
      }
      const limited = await admin.json("POST", `/api/hosts/${hostId}/recovery-kit`, { password: PASSWORD });
      expect(limited.status).toBe(429);
      expectNoSecret(await limited.text());
      deps.clock.advance(5 * 60_000 + 1_000);
      const later = await admin.json("POST", `/api/hosts/${hostId}/recovery-kit`, { password: PASSWORD });
      expect(later.status).toBe(200);
    });
  });

  it("gives the admin every slot with the values restic needs, uncached, audited by host id only", async () => {
    await closingAfter(setUp(getDb), async ({ deps, admin, hostId }) => {
      const res = await admin.json("POST", `/api/hosts/${hostId}/recovery-kit`, { password: PASSWORD });
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      const body = (await res.json()) as {
        kit: { scope: string; hosts: Array<Record<string, unknown> & { repositories: unknown[] }> };
        text: string;
      };
      expect(body.kit.scope).toBe("host");
      const [host] = body.kit.hosts;
      expect(host).toMatchObject({
        id: hostId,
        name: "web-1",
        restic_host: "web-1-kit",
        restic_version: "0.18.0",
      });
      expect(host?.repositories).toEqual([
        expect.objectContaining({
          slot: "repo",
          state: "bound",
          url: "rest:http://127.0.0.1:8000/web-1/",
          restic_repository: `rest:http://web-1:${LOGIN_CANARY}@127.0.0.1:8000/web-1/`,
          password: REPO_CANARY,
          username: "web-1",
          login_password: LOGIN_CANARY,
        }),
        expect.objectContaining({
          slot: "admin",
          label: expect.stringMatching(/^Admin/),
          // Without a login password of its own the repository password is the login.
          restic_repository: `rest:http://web-1-admin:${ADMIN_CANARY}@127.0.0.1:8000/web-1/`,
          password: ADMIN_CANARY,
          login_password: null,
        }),
        expect.objectContaining({
          slot: "mirror",
          label: expect.stringMatching(/^Mirror/),
          restic_repository: "/srv/mirror/web-1",
          password: MIRROR_CANARY,
          username: null,
        }),
      ]);
      for (const canary of [REPO_CANARY, LOGIN_CANARY, ADMIN_CANARY, MIRROR_CANARY, "web-1-kit", "0.18.0"]) {
        expect(body.text).toContain(canary);
      }
      expect(body.text).toContain("restore latest --host web-1-kit --target /tmp/restore --include");
      // The password reaches restic through the environment, never as an argument.
      expect(body.text).toContain(`RESTIC_PASSWORD='${REPO_CANARY}'`);
      expect(body.text).not.toContain("--password");

      const rows = await auditRows(deps);
      expect(rows.map((row) => [row.action, row.targetKind, row.targetId, row.details])).toEqual([
        ["recovery_kit.export", "host", hostId, { scope: "host", host_ids: [hostId] }],
      ]);
      expectNoSecret(JSON.stringify(rows));
      expectNoSecret(deps.logLines.join("\n"));
    });
  });

  it("covers the whole fleet in one kit, hosts by name", async () => {
    await closingAfter(setUp(getDb), async ({ deps, admin, hostId }) => {
      const { host: other } = await seedHost(deps, { name: "db-1" });
      const res = await admin.json("POST", "/api/recovery-kit", { password: PASSWORD });
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      const body = (await res.json()) as {
        kit: { scope: string; hosts: Array<{ id: string; repositories: unknown[] }> };
      };
      expect(body.kit.scope).toBe("fleet");
      expect(body.kit.hosts.map((host) => host.id)).toEqual([other.id, hostId]);
      expect(body.kit.hosts[0]?.repositories).toEqual([]);
      const rows = await auditRows(deps);
      expect(rows.map((row) => [row.action, row.targetKind, row.details])).toEqual([
        ["recovery_kit.export", "fleet", { scope: "fleet", host_ids: [other.id, hostId] }],
      ]);
    });
  });

  it("is for admins only, and never for an API token, even an admin's", async () => {
    await closingAfter(setUp(getDb), async ({ deps, app, admin, hostId }) => {
      for (const role of ["operator", "viewer"] as const) {
        const created = await admin.json("POST", "/api/users", {
          username: role,
          password: "a long enough passphrase 42",
          role,
        });
        expect(created.status).toBe(201);
        const client = createTestClient(app, deps.config.baseUrl);
        await client.json("POST", "/api/auth/login", {
          username: role,
          password: "a long enough passphrase 42",
        });
        const api = await client.json("POST", `/api/hosts/${hostId}/recovery-kit`, {
          password: "a long enough passphrase 42",
        });
        expect(api.status).toBe(403);
        expectNoSecret(await api.text());
        expect(
          (await client.json("POST", "/api/recovery-kit", { password: "a long enough passphrase 42" }))
            .status,
        ).toBe(403);
        expect((await client.request(`/hosts/${hostId}/recovery-kit`)).status).toBe(403);
      }
      const minted = (await (await admin.json("POST", "/api/api-tokens", { name: "script" })).json()) as {
        token: string;
      };
      const viaToken = await app.request(`/api/hosts/${hostId}/recovery-kit`, {
        method: "POST",
        headers: { Authorization: `Bearer ${minted.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ password: PASSWORD }),
      });
      expect(viaToken.status).toBe(403);
      expectNoSecret(await viaToken.text());
      const rows = await auditRows(deps);
      expect(rows.map((row) => [row.action, row.details])).toEqual([
        ["recovery_kit.export_refused", { scope: "host", reason: "api_token" }],
      ]);
    });
  });

  it("downloads one Markdown file from the page after the password, and shows the form again on a wrong one", async () => {
    await closingAfter(setUp(getDb), async ({ deps, admin, hostId }) => {
      const hostPage = await (await admin.request(`/hosts/${hostId}`)).text();
      expect(hostPage).toContain(`href="/hosts/${hostId}/recovery-kit"`);
      expect(await (await admin.request("/hosts")).text()).toContain('href="/recovery-kit"');
      const formPage = await admin.request(`/hosts/${hostId}/recovery-kit`);
      expect(formPage.status).toBe(200);
      const html = await formPage.text();
      expect(html).toContain('name="password"');
      expectNoSecret(html);
      const csrf = csrfFrom(html);

      const wrong = await admin.form(`/hosts/${hostId}/recovery-kit`, { _csrf: csrf, password: "guess" });
      expect(wrong.status).toBe(403);
      const wrongHtml = await wrong.text();
      expect(wrongHtml).toContain("password: is wrong");
      expect(wrongHtml).toContain('name="password"');
      expectNoSecret(wrongHtml);

      const file = await admin.form(`/hosts/${hostId}/recovery-kit`, { _csrf: csrf, password: PASSWORD });
      expect(file.status).toBe(200);
      expect(file.headers.get("cache-control")).toBe("no-store");
      expect(file.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
      expect(file.headers.get("content-disposition")).toBe(
        'attachment; filename="fleetback-recovery-kit-web-1-2026-11-21.md"',
      );
      const text = await file.text();
      expect(text).toContain(REPO_CANARY);
      expect(text).toContain(`rest:http://web-1:${LOGIN_CANARY}@127.0.0.1:8000/web-1/`);

      const fleet = await admin.form("/recovery-kit", { _csrf: csrf, password: PASSWORD });
      expect(fleet.headers.get("content-disposition")).toContain("fleetback-recovery-kit-fleet-");
      expect((await auditRows(deps)).map((row) => row.action)).toEqual([
        "recovery_kit.export",
        "recovery_kit.export",
        "recovery_kit.export_refused",
      ]);
      expectNoSecret(deps.logLines.join("\n"));
    });
  });

  it("takes a recent single sign-on instead of a password, and refuses an older one", async () => {
    await closingAfter(setUp(getDb), async ({ deps, app, hostId }) => {
      const [user] = await deps.db
        .insert(users)
        .values({
          id: "01JSSOKITUSER0000000000000",
          username: "sso-admin",
          role: "admin",
          ssoIssuer: "https://idp.test",
          ssoSubject: "sub-1",
        })
        .returning();
      if (!user) {
        throw new Error("no user");
      }
      const session = await createSession(deps, user, "auth.sso_login");
      const client = createTestClient(app, deps.config.baseUrl);
      client.cookie = `${SESSION_COOKIE}=${session.token}`;
      const form = await (await client.request(`/hosts/${hostId}/recovery-kit`)).text();
      expect(form).not.toContain('name="password"');
      expect(SSO_SIGN_IN_PATH).toBe(SSO_START_PATH);
      expect(form).toContain(`${SSO_START_PATH}?next=${encodeURIComponent(`/hosts/${hostId}/recovery-kit`)}`);

      deps.clock.advance(9 * 60_000);
      const fresh = await client.json("POST", `/api/hosts/${hostId}/recovery-kit`, {});
      expect(fresh.status).toBe(200);
      deps.clock.advance(2 * 60_000);
      const stale = await client.json("POST", `/api/hosts/${hostId}/recovery-kit`, {});
      expect(stale.status).toBe(403);
      expect(((await stale.json()) as { message: string }).message).toMatch(/sign in again/);
      const rows = await auditRows(deps);
      expect(rows.map((row) => [row.action, row.actorUserId, row.details])).toEqual([
        ["recovery_kit.export", user.id, { scope: "host", host_ids: [hostId] }],
        ["recovery_kit.export_refused", user.id, { scope: "host", reason: "sso_sign_in_too_old" }],
      ]);
    });
  });
});

/**
 * Changing one's own password (PUT /api/auth/me/password, /account/password) and an admin setting
 * another user's (POST /api/users/:id/password, the users page), in-process on both engines: the
 * current password is required, the new one meets the creation rules, the other sessions end and
 * the changing one stays, guesses are rate-limited, and no password reaches the audit log, the
 * server log or a page.
 */
import type { Database } from "@fleetback/db";
import { auditLog } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { closingAfter } from "../testing/closing-after.js";
import { csrfFrom, messageOf, type TestClient } from "../testing/http.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

const OLD = "the first passphrase";
const NEW = "a brand new passphrase";
// Every step hashes or verifies with argon2id (64 MiB, 3 passes) on a shared test machine.
const SLOW = 180_000;

interface Setup {
  deps: TestDeps;
  admin: TestClient;
  olgaId: string;
  client(): TestClient;
  signIn(password: string): Promise<{ client: TestClient; status: number }>;
}

async function setup(db: Database): Promise<Setup> {
  const { deps, admin, anonymous: client } = await startSignedInApp({ deps: { db }, adminName: "root" });
  const created = await admin.json("POST", "/api/users", { username: "olga", password: OLD, role: "viewer" });
  const { user } = (await created.json()) as { user: { id: string } };
  const signIn = async (password: string) => {
    const c = client();
    const res = await c.json("POST", "/api/auth/login", { username: "olga", password });
    return { client: c, status: res.status };
  };
  return { deps, admin, olgaId: user.id, client, signIn };
}

async function auditActions(db: Database, targetId: string): Promise<string[]> {
  const rows = await db.select().from(auditLog).where(eq(auditLog.targetId, targetId));
  return rows.map((row) => row.action);
}

async function expectNoSecret(s: Setup, secrets: string[]): Promise<void> {
  const audit = JSON.stringify(await s.deps.db.select().from(auditLog));
  const logs = s.deps.logLines.join("\n");
  for (const secret of secrets) {
    expect(audit).not.toContain(secret);
    expect(logs).not.toContain(secret);
  }
}

/** A test on an app of its own where olga signs in with OLD, closed after it, passed or failed. */
function passwordTest(getDb: () => Database, name: string, test: (s: Setup) => Promise<void>): void {
  it(name, () => closingAfter(setup(getDb()), test), SLOW);
}

runDbSuite("changing one's own password", (getDb) => {
  passwordTest(getDb, "needs the current password, keeps this session and ends the others", async (s) => {
    const a = await s.signIn(OLD);
    const b = await s.signIn(OLD);
    expect([a.status, b.status]).toEqual([200, 200]);

    const wrong = await a.client.json("PUT", "/api/auth/me/password", {
      current_password: "not my password",
      new_password: NEW,
    });
    expect(wrong.status).toBe(400);
    expect(await messageOf(wrong)).toBe("current_password: is wrong");

    const weak = await a.client.json("PUT", "/api/auth/me/password", {
      current_password: OLD,
      new_password: "short",
    });
    expect(weak.status).toBe(400);
    expect(await messageOf(weak)).toBe("new_password: must be at least 12 characters");
    const withName = await a.client.json("PUT", "/api/auth/me/password", {
      current_password: OLD,
      new_password: "i-am-olga-and-proud",
    });
    expect(await messageOf(withName)).toBe("new_password: must not contain the username");
    const extra = await a.client.json("PUT", "/api/auth/me/password", {
      current_password: OLD,
      new_password: NEW,
      role: "admin",
    });
    expect(extra.status).toBe(400);
    // Nothing changed yet: both sessions are alive.
    expect((await b.client.request("/api/auth/me")).status).toBe(200);

    const ok = await a.client.json("PUT", "/api/auth/me/password", {
      current_password: OLD,
      new_password: NEW,
    });
    expect(ok.status).toBe(204);
    expect((await a.client.request("/api/auth/me")).status).toBe(200);
    expect((await b.client.request("/api/auth/me")).status).toBe(401);
    expect((await s.signIn(OLD)).status).toBe(401);
    expect((await s.signIn(NEW)).status).toBe(200);
    expect(await auditActions(s.deps.db, s.olgaId)).toContain("user.password_change");
    await expectNoSecret(s, [OLD, NEW]);
  });

  passwordTest(
    getDb,
    "works from the account page, checking the confirmation, without the password in the page",
    async (s) => {
      const { client } = await s.signIn(OLD);
      const page = await client.request("/account/password");
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('name="current_password"');
      expect(html).toContain('href="/account/password"');
      const csrf = csrfFrom(html);
      const mismatch = await client.form(
        "/account/password",
        { _csrf: csrf, current_password: OLD, new_password: NEW, confirm_password: `${NEW}!` },
        { "X-CSRF-Token": csrf, "HX-Request": "true" },
      );
      expect(mismatch.status).toBe(400);
      expect(await mismatch.text()).toBe("confirm_password: does not match the new password");
      const done = await client.form("/account/password", {
        _csrf: csrf,
        current_password: OLD,
        new_password: NEW,
        confirm_password: NEW,
      });
      expect(done.status).toBe(303);
      expect(done.headers.get("location")).toBe("/account/password?changed=1");
      const after = await (await client.request("/account/password?changed=1")).text();
      expect(after).toContain('data-testid="password-changed"');
      expect(after).not.toContain(NEW);
      expect((await s.signIn(NEW)).status).toBe(200);
    },
  );

  passwordTest(getDb, "limits guesses of the current password like sign-in, with Retry-After", async (s) => {
    const { client } = await s.signIn(OLD);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await client.json("PUT", "/api/auth/me/password", {
        current_password: `guess number ${i}`,
        new_password: NEW,
      });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      }
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(400));
    expect(statuses[10]).toBe(429);
    // Even the right password waits for the window.
    const right = await client.json("PUT", "/api/auth/me/password", {
      current_password: OLD,
      new_password: NEW,
    });
    expect(right.status).toBe(429);
    s.deps.clock.advance(5 * 60_000 + 1000);
    const later = await client.json("PUT", "/api/auth/me/password", {
      current_password: OLD,
      new_password: NEW,
    });
    expect(later.status).toBe(204);
  });
});

runDbSuite("an admin resetting a password", (getDb) => {
  passwordTest(
    getDb,
    "sets the new password, signs the user out everywhere and audits it without the password",
    async (s) => {
      const olga = await s.signIn(OLD);
      expect((await olga.client.request("/api/auth/me")).status).toBe(200);
      const weak = await s.admin.json("POST", `/api/users/${s.olgaId}/password`, { password: "short" });
      expect(weak.status).toBe(400);
      expect(await messageOf(weak)).toBe("password: must be at least 12 characters");
      const missing = await s.admin.json("POST", "/api/users/01JDNOSUCHUSER00000000000000/password", {
        password: NEW,
      });
      expect(missing.status).toBe(404);

      // A viewer cannot reset anyone's password, not even their own this way.
      const byViewer = await olga.client.json("POST", `/api/users/${s.olgaId}/password`, { password: NEW });
      expect(byViewer.status).toBe(403);

      const ok = await s.admin.json("POST", `/api/users/${s.olgaId}/password`, { password: NEW });
      expect(ok.status).toBe(204);
      expect((await olga.client.request("/api/auth/me")).status).toBe(401);
      expect((await s.signIn(OLD)).status).toBe(401);
      expect((await s.signIn(NEW)).status).toBe(200);
      // The admin stays signed in.
      expect((await s.admin.request("/api/auth/me")).status).toBe(200);
      expect(await auditActions(s.deps.db, s.olgaId)).toContain("user.password_reset");
      await expectNoSecret(s, [NEW]);
    },
  );

  passwordTest(
    getDb,
    "refuses the admin's own account (that takes the current password) and works from the users page",
    async (s) => {
      const me = (await (await s.admin.request("/api/auth/me")).json()) as { user: { id: string } };
      const self = await s.admin.json("POST", `/api/users/${me.user.id}/password`, { password: NEW });
      expect(self.status).toBe(409);
      expect(await messageOf(self)).toMatch(/^password: change your own password on \/account\/password/);

      const html = await (await s.admin.request("/settings/users")).text();
      expect(html).toContain(`action="/settings/users/${s.olgaId}/password"`);
      expect(html).not.toContain(`action="/settings/users/${me.user.id}/password"`);
      const csrf = csrfFrom(html);
      const res = await s.admin.form(`/settings/users/${s.olgaId}/password`, {
        _csrf: csrf,
        password: NEW,
      });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/settings/users?reset=1");
      const after = await (await s.admin.request("/settings/users?reset=1")).text();
      expect(after).toContain('data-testid="password-reset-done"');
      expect(after).not.toContain(NEW);
      expect((await s.signIn(NEW)).status).toBe(200);
    },
  );
});

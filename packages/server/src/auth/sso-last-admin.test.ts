/**
 * The last enabled admin survives two single sign-ons that run at once on PostgreSQL, each
 * demoting one of the last two admins (issue 34). The two sign-ins are made to overlap for sure:
 * a third transaction holds the admins' rows until both sign-ins wait on it, then lets go.
 * Without the rows locked, each counted two admins and demoted its own: none was left.
 */

import { type User, users } from "@fleetback/db";
import { testDatabaseUrl, testEngines } from "@fleetback/db/testing";
import { and, eq, isNull, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../testing/eventually.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";
import { parseSsoConfig } from "./sso-config.js";
import { ssoUser } from "./sso-users.js";

/** The `n` column of the first row, from postgres.js (an array) or PGlite (`rows`). */
function firstNumber(result: unknown): number {
  const rows = Array.isArray(result) ? result : (result as { rows: unknown[] }).rows;
  return Number((rows[0] as { n: unknown } | undefined)?.n);
}

const CI = /^(true|1)$/i.test(process.env.CI ?? "");
const ISSUER = "https://id.example.com";

describe.skipIf(!CI && !testEngines().includes("postgres"))(
  "the last admin under concurrent sign-ins",
  () => {
    let deps: TestDeps;
    beforeAll(async () => {
      testDatabaseUrl();
      deps = await createTestDeps({ engine: "postgres" });
    });
    afterAll(async () => {
      await deps?.close();
    });

    it("keeps one admin when two sign-ins each demote one of the last two", async () => {
      const errors: string[] = [];
      const config = parseSsoConfig(
        {
          FLEETBACK_OIDC_ISSUER: ISSUER,
          FLEETBACK_OIDC_CLIENT_ID: "fleetback",
          FLEETBACK_OIDC_CLIENT_SECRET: "secret",
          FLEETBACK_OIDC_ROLE_CLAIM: "groups",
          FLEETBACK_OIDC_ROLE_MAP: "fleet-admins=admin,fleet-ops=operator",
        },
        process.cwd(),
        errors,
      );
      if (config === undefined) {
        throw new Error(errors.join("; "));
      }
      const admins: User[] = [];
      for (const name of ["ada", "bea"]) {
        const rows = await deps.db
          .insert(users)
          .values({
            id: deps.ids.ulid(deps.clock.now()),
            username: name,
            passwordHash: null,
            role: "admin",
            createdAt: deps.clock.now(),
            ssoIssuer: ISSUER,
            ssoSubject: name,
          })
          .returning();
        admins.push(rows[0] as User);
      }

      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let holderPid: number | undefined;
      const holder = deps.db.transaction(async (tx) => {
        const pid = firstNumber(await tx.execute(sql`select pg_backend_pid() as n`));
        await tx.select({ id: users.id }).from(users).for("update");
        holderPid = pid;
        await released;
      });
      await eventually(
        () => holderPid,
        (pid) => pid !== undefined && pid > 0,
        { what: "the holder's lock" },
      );

      // Both left the provider's admin group; each signs in on its own connection.
      const signIns = ["ada", "bea"].map((subject) =>
        ssoUser(
          deps,
          config,
          { issuer: ISSUER, subject, claims: { sub: subject, groups: ["fleet-ops"] }, next: "/" },
          {},
        ),
      );
      await eventually(
        async () =>
          firstNumber(
            await deps.db.execute(
              // A second waiter for a row waits behind the first: blocked by the holder, or by one it blocks.
              sql`with w as (select pid, pg_blocking_pids(pid) as b from pg_stat_activity)
                select count(*)::int as n from w
                 where ${holderPid} = any(w.b)
                    or exists (select 1 from w as v where v.pid = any(w.b) and ${holderPid} = any(v.b))`,
            ),
          ),
        (n) => n === 2,
        { what: "both sign-ins waiting on the held rows" },
      );
      release();
      await holder;
      const results = await Promise.all(signIns);

      const left = await deps.db
        .select({ username: users.username })
        .from(users)
        .where(and(eq(users.role, "admin"), isNull(users.disabledAt)));
      expect(left).toHaveLength(1);
      expect(results.map((user) => user.role).sort()).toEqual(["admin", "operator"]);
    });
  },
);

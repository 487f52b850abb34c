import { sql } from "drizzle-orm";
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { drizzlePostgres } from "./connect.js";
import { isConnectionError } from "./errors.js";
import { runDbSuite } from "./testing/db-suite.js";
import { postgresNote, testDatabaseUrl, testEngines } from "./testing/test-engine.js";

async function failureOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

runDbSuite("isConnectionError", (getDb) => {
  it("is false for a query the database refused", async () => {
    const error = await failureOf(() => getDb().execute(sql`select * from no_such_table`));
    expect(isConnectionError(error)).toBe(false);
    expect(isConnectionError(new Error("plain"))).toBe(false);
  });
});

describe.skipIf(!testEngines().includes("postgres"))(
  `isConnectionError on PostgreSQL${postgresNote()}`,
  () => {
    it("is true when nothing listens and when the backend is terminated", async () => {
      const refused = postgres("postgres://postgres@127.0.0.1:1/none", { max: 1, connect_timeout: 2 });
      expect(
        isConnectionError(
          await failureOf(() => drizzlePostgres(refused).then((db) => db.execute(sql`select 1`))),
        ),
      ).toBe(true);
      await refused.end({ timeout: 0 });

      const victim = postgres(testDatabaseUrl(), { max: 1, onnotice: () => {} });
      const admin = postgres(testDatabaseUrl(), { max: 1, onnotice: () => {} });
      try {
        const [{ pid }] = (await victim`select pg_backend_pid() as pid`) as unknown as [{ pid: number }];
        const sleeping = failureOf(() => victim`select pg_sleep(10)`);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await admin`select pg_terminate_backend(${pid})`;
        expect(isConnectionError(await sleeping)).toBe(true);
      } finally {
        await victim.end({ timeout: 0 });
        await admin.end({ timeout: 0 });
      }
    });
  },
);

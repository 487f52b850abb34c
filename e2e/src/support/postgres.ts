/**
 * @module support/postgres
 * A fresh PostgreSQL database per e2e suite (when TEST_DATABASE_URL is set), and pg_dump of it
 * for the secret greps.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import postgres from "postgres";

export interface TestPostgres {
  url: string;
  dump(): string;
  drop(): Promise<void>;
}

export async function createPostgresDatabase(adminUrl: string): Promise<TestPostgres> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  const name = `fleetback_e2e_${Date.now()}_${randomBytes(3).toString("hex")}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dump: () =>
      execFileSync("pg_dump", ["--data-only", "--inserts", url.toString()], {
        encoding: "utf8",
        maxBuffer: 256 * 2 ** 20,
      }),
    async drop() {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

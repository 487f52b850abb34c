import { connect, IN_MEMORY, isConnectionError, isPostgresWriteAfterClose } from "@fleetback/db";
import { postgresNote, terminateBackendsRunning, testDatabaseUrl, testEngines } from "@fleetback/db/testing";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createLogger } from "./log.js";
import { installProcessGuard } from "./process-guard.js";

describe("isPostgresWriteAfterClose", () => {
  it("knows the postgres.js TypeError by message and frame, and nothing else", () => {
    const bug = new TypeError("Cannot read properties of null (reading 'write')");
    bug.stack = `${bug.message}\n    at Immediate.nextWrite (/app/node_modules/postgres/src/connection.js:255:22)`;
    expect(isPostgresWriteAfterClose(bug)).toBe(true);
    const elsewhere = new TypeError("Cannot read properties of null (reading 'write')");
    elsewhere.stack = `${elsewhere.message}\n    at ours (/app/dist/server.js:1:1)`;
    expect(isPostgresWriteAfterClose(elsewhere)).toBe(false);
    expect(isPostgresWriteAfterClose(new Error("reading 'write' postgres/src/connection.js"))).toBe(false);
  });
});

describe.skipIf(!testEngines().includes("postgres"))(`process guard on PostgreSQL${postgresNote()}`, () => {
  it("survives postgres.js writing to a connection whose backend was terminated mid-transaction", async () => {
    const lines: string[] = [];
    let guardLogged: () => void = () => undefined;
    const bugLogged = new Promise<void>((resolve) => {
      guardLogged = resolve;
    });
    const exits: number[] = [];
    // The guard must be the only listener while the bug fires (vitest's own would record it).
    const saved = process.listeners("uncaughtException");
    process.removeAllListeners("uncaughtException");
    const remove = installProcessGuard(
      createLogger("debug", {
        write(line: string) {
          lines.push(line);
          if (line.includes("postgres.js #1154")) {
            guardLogged();
          }
        },
      }),
      (code) => exits.push(code),
    );
    const pool = await connect({ databaseUrl: testDatabaseUrl(), dataDir: IN_MEMORY });
    const admin = await connect({ databaseUrl: testDatabaseUrl(), dataDir: IN_MEMORY });
    try {
      const tag = `guard_${Date.now()}`;
      const failed = pool.db
        .transaction(async (tx) => {
          await tx.execute(sql.raw(`select pg_sleep(30) as ${tag}`));
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      // Terminated once the server runs it, however long the machine takes to get there.
      await terminateBackendsRunning(admin.db, tag);
      expect(isConnectionError(await failed)).toBe(true);
      await bugLogged;
      expect(lines.some((line) => line.includes("postgres.js #1154"))).toBe(true);
      expect(exits).toEqual([]);
      // The pool carries on with a new connection.
      await pool.ping();
    } finally {
      remove();
      for (const listener of saved) {
        process.on("uncaughtException", listener);
      }
      await pool.close();
      await admin.close();
    }
  });
});

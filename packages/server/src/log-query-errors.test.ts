/**
 * Issue 13, finding 9: a failed query is logged without its values. drizzle puts them into its
 * error's message, stack and `params`, postgres.js into `parameters`, and both engines put the
 * failing row into `detail`; all of them held the token hash of a hello that broke the index.
 */
import { hosts } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { expect, it } from "vitest";
import { createLogger } from "./log.js";

const SECRET = "Canary-token-hash-5d1e";

runDbSuite("logging a failed query", (getDb) => {
  async function failure(values: Partial<typeof hosts.$inferInsert>): Promise<unknown> {
    try {
      await getDb()
        .insert(hosts)
        .values({
          id: "01M84000000000000000000000",
          name: "h",
          resticHost: "h",
          os: "linux",
          arch: "x64",
          agentVersion: "1",
          ...values,
        });
    } catch (err) {
      return err;
    }
    throw new Error("the insert was expected to fail");
  }

  function logged(err: unknown): string {
    const lines: string[] = [];
    const log = createLogger("info", { write: (line: string) => lines.push(line) });
    log.error({ err, host_id: "h" }, "storing the hello failed");
    log.error(err, "the same error as the first argument");
    return lines.join("\n");
  }

  it("a check violation: the row's values (detail) and the bound parameters are not logged", async () => {
    const err = await failure({ status: "bogus" as "online", agentTokenHash: SECRET });
    const text = logged(err);
    expect(text).not.toContain(SECRET);
    // Still useful: which query and which constraint failed.
    expect(text).toContain("hosts_status_check");
    expect(text).toContain("insert into");
  });

  it("a 900 KB value that breaks the name index logs neither the value nor megabytes", async () => {
    const err = await failure({ name: `${"x".repeat(900_000)}`, agentTokenHash: SECRET });
    const text = logged(err);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("x".repeat(5_000));
    expect(text.length).toBeLessThan(40_000);
  });
});

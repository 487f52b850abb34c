import { hashPassword, needsRehash, verifyPassword } from "@fleetback/crypto";
import { users } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { describe, expect, it } from "vitest";
import { DUMMY_PASSWORD_HASH, verifyLogin } from "./users.js";

describe("the unknown-user hash", () => {
  it("has the parameters of a freshly hashed password, so an unknown user costs the same work", async () => {
    expect(needsRehash(DUMMY_PASSWORD_HASH)).toBe(false);
    expect(await verifyPassword("fleetback-timing-equaliser", DUMMY_PASSWORD_HASH)).toBe(true);
  });
});

runDbSuite("verifyLogin", (getDb) => {
  it("finds no user for an unknown name, even with the equaliser's password", async () => {
    expect(await verifyLogin(getDb(), "nobody", "fleetback-timing-equaliser")).toBeUndefined();
  });

  it("answers the user for the right password only", async () => {
    await getDb()
      .insert(users)
      .values({
        id: "01JDUMMYHASHTESTUSER000000",
        username: "operator",
        passwordHash: await hashPassword("a long enough passphrase"),
        role: "admin",
        createdAt: new Date("2026-11-21T12:00:00Z"),
      });
    expect((await verifyLogin(getDb(), "operator", "a long enough passphrase"))?.id).toBe(
      "01JDUMMYHASHTESTUSER000000",
    );
    expect(await verifyLogin(getDb(), "operator", "a wrong passphrase here")).toBeUndefined();
  });
});

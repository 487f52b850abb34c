import { describe, expect, it } from "vitest";
import { redactDatabaseUrl, scrubPassword } from "./redact.js";

describe("redactDatabaseUrl", () => {
  it.each([
    ["postgres://fleet:s3cret@db.example:5432/fleetback", "postgres://fleet:***@db.example:5432/fleetback"],
    ["postgresql://fleet:p%40ss@db/fb?sslmode=require", "postgresql://fleet:***@db/fb?sslmode=require"],
    ["postgres://fleet:p@ss/word@db/fb", "postgres://fleet:***@db/fb"],
    [
      "postgres://fleet@db/fb?password=s3cret&sslmode=require",
      "postgres://fleet@db/fb?password=***&sslmode=require",
    ],
    ["postgres://fleet@db:5432/fb", "postgres://fleet@db:5432/fb"],
    ["postgres://db:5432/fb", "postgres://db:5432/fb"],
    ["postgres:///fb?host=/run/postgresql", "postgres:///fb?host=/run/postgresql"],
  ])("%s → %s", (url, expected) => {
    expect(redactDatabaseUrl(url)).toBe(expected);
  });
});

describe("scrubPassword", () => {
  it("removes the raw and the decoded password from free text", () => {
    const url = "postgres://fleet:p%40ss@db/fb";
    expect(scrubPassword("auth failed for p%40ss and p@ss", url)).toBe("auth failed for *** and ***");
    expect(scrubPassword("connect ECONNREFUSED", url)).toBe("connect ECONNREFUSED");
  });
});

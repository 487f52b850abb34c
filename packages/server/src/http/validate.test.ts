import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { RequestError } from "../errors.js";
import { describeProblems, validate } from "./validate.js";

const User = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 64 }),
    role: Type.Union([Type.Literal("admin"), Type.Literal("operator"), Type.Literal("viewer")]),
    nested: Type.Optional(Type.Object({ port: Type.Integer({ minimum: 1 }) })),
  },
  { additionalProperties: false },
);

describe("validate", () => {
  it("returns the value when it matches", () => {
    expect(validate(User, { username: "ann", role: "viewer" })).toEqual({ username: "ann", role: "viewer" });
  });

  it("names the failing field first and lists every problem", () => {
    try {
      validate(User, { username: "", role: "root", extra: 1, nested: { port: 0 } });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(RequestError);
      const error = err as RequestError;
      expect(error.code).toBe("invalid");
      expect(error.message).toMatch(/^(extra|username|role|nested\.port): /);
      expect(error.details).toEqual(
        expect.arrayContaining([
          { field: "extra", message: "is not a known field" },
          { field: "username", message: expect.stringContaining("fewer than 1") },
          { field: "role", message: "must be one of admin, operator, viewer" },
          { field: "nested.port", message: expect.any(String) },
        ]),
      );
    }
  });

  it("says a made-up field name with control characters or of a kilobyte escaped and cut, at its holder", () => {
    expect(describeProblems(User, { username: "ann", role: "viewer", "pa\u0019ss": 1 })).toEqual([
      { field: "body", message: 'has a field that is not known: "pa\\u0019ss"' },
    ]);
    const long = "x".repeat(1000);
    expect(describeProblems(User, { username: "ann", role: "viewer", [long]: 1 })).toEqual([
      { field: "body", message: `has a field that is not known: "${"x".repeat(64)}"` },
    ]);
  });

  it("names a missing field", () => {
    expect(describeProblems(User, { role: "admin" })).toEqual([
      { field: "username", message: "is required" },
    ]);
  });
});

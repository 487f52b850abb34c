/**
 * Label selectors: the parser (every form, errors naming position and token) and the in-memory
 * evaluator, Kubernetes' semantics for != and notin on hosts without the key.
 */
import { describe, expect, it } from "vitest";
import { formatSelector, matchesSelector, parseSelector, SelectorError } from "./selector.js";

describe("parseSelector", () => {
  it("reads every requirement form, with or without spaces", () => {
    expect(parseSelector("env=prod, role in (db,web), !staging")).toEqual([
      { key: "env", op: "eq", value: "prod" },
      { key: "role", op: "in", values: ["db", "web"] },
      { key: "staging", op: "notexists" },
    ]);
    expect(parseSelector("tier==gold,zone!=eu-1,os notin ( win , mac ),example.com/team")).toEqual([
      { key: "tier", op: "eq", value: "gold" },
      { key: "zone", op: "ne", value: "eu-1" },
      { key: "os", op: "notin", values: ["win", "mac"] },
      { key: "example.com/team", op: "exists" },
    ]);
    expect(parseSelector("")).toEqual([]);
    expect(parseSelector("   ")).toEqual([]);
    expect(parseSelector("k=")).toEqual([{ key: "k", op: "eq", value: "" }]);
  });

  it("names the position and the token of a mistake", () => {
    const cases: Array<[string, number, string, string]> = [
      ["env=prod,", 10, "", "expected a label key"],
      ["env=prod role=db", 10, "role", 'expected "," or the end'],
      ["role in db", 9, "db", 'expected "(" after in'],
      ["role in (db web)", 13, "web", 'expected "," or ")"'],
      ["env=pr*d", 7, "*", "is not allowed"],
      ["-env=prod", 1, "-env", "must start and end with a letter or digit"],
      ["env=-prod", 5, "-prod", "may hold only letters"],
      ["Example.com/team", 1, "Example.com/team", "lower-case DNS name"],
      ["env role", 5, "role", "expected =, !=, in, notin"],
      ["!", 2, "", "expected a label key"],
      [`k=${"v".repeat(64)}`, 3, "v".repeat(64), "at most 63"],
    ];
    for (const [text, position, token, problem] of cases) {
      let caught: unknown;
      try {
        parseSelector(text);
      } catch (error) {
        caught = error;
      }
      expect(caught, text).toBeInstanceOf(SelectorError);
      const error = caught as SelectorError;
      expect({ position: error.position, token: error.token }, text).toEqual({ position, token });
      expect(error.message, text).toContain(problem);
      expect(error.message, text).toContain(`at position ${position}`);
    }
  });

  it("formats back to a selector that parses to the same requirements", () => {
    const text = "env=prod,role in (db,web),!staging,zone!=eu,os notin (win),team";
    expect(parseSelector(formatSelector(parseSelector(text)))).toEqual(parseSelector(text));
  });
});

describe("matchesSelector", () => {
  const prodDb = { env: "prod", role: "db" };
  const stagingWeb = { env: "staging", role: "web", staging: "" };
  const bare = {};

  it("ANDs requirements, != and notin also matching hosts without the key", () => {
    const match = (text: string) =>
      [prodDb, stagingWeb, bare].map((labels) => matchesSelector(parseSelector(text), labels));
    expect(match("env=prod")).toEqual([true, false, false]);
    expect(match("env!=prod")).toEqual([false, true, true]);
    expect(match("role in (db,web)")).toEqual([true, true, false]);
    expect(match("role notin (db)")).toEqual([false, true, true]);
    expect(match("staging")).toEqual([false, true, false]);
    expect(match("!staging")).toEqual([true, false, true]);
    expect(match("staging=")).toEqual([false, true, false]);
    expect(match("env=prod,role in (db,web),!staging")).toEqual([true, false, false]);
    expect(match("")).toEqual([true, true, true]);
  });

  it("does not take inherited object keys for labels", () => {
    expect(matchesSelector(parseSelector("constructor"), {})).toBe(false);
    expect(matchesSelector(parseSelector("toString!=x"), {})).toBe(true);
  });
});

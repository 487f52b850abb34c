/**
 * Label rules: Kubernetes-shaped keys and values, at most 32 per host, every problem naming the
 * field and the label; the text form (`env=prod, role=db`) of the enrol form and --label.
 */
import { describe, expect, it } from "vitest";
import { RequestError } from "../errors.js";
import { checkLabels, formatLabels, labelKeyProblem, parseLabelText } from "./label-rules.js";

function problemOf(run: () => unknown): { message: string; details: unknown } {
  try {
    run();
  } catch (error) {
    if (error instanceof RequestError) {
      return { message: error.message, details: error.details };
    }
    throw error;
  }
  throw new Error("expected a RequestError");
}

describe("label rules", () => {
  it("accepts Kubernetes-shaped keys and values", () => {
    const good = { env: "prod", "example.com/team": "a.b-c_d", x: "", ["k".repeat(63)]: "v".repeat(63) };
    expect(checkLabels(good, "labels")).toEqual(good);
  });

  it("refuses bad keys, values and counts, naming the field and the label", () => {
    for (const key of ["", "-a", "a-", "a b", "ä", "Example.com/a", "/a", "a/", "a/b/c", "k".repeat(64)]) {
      expect(labelKeyProblem(key), key).toBeDefined();
    }
    expect(problemOf(() => checkLabels({ env: "pr od" }, "labels"))).toMatchObject({
      message: expect.stringContaining('labels.env: the value "pr od" of "env"'),
      details: [{ field: "labels.env" }],
    });
    expect(problemOf(() => checkLabels({ "-bad": "x" }, "set")).message).toContain(
      'set.-bad: the key "-bad"',
    );
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, "v"]));
    expect(problemOf(() => checkLabels(many, "labels")).message).toBe(
      "labels: has 33 labels; a host has at most 32",
    );
  });

  it("reads and writes the text form, refusing a key given twice or an item without =", () => {
    expect(parseLabelText(" env=prod, role=db ,\nx=", "labels")).toEqual({ env: "prod", role: "db", x: "" });
    expect(parseLabelText("", "labels")).toEqual({});
    expect(formatLabels({ role: "db", env: "prod" })).toBe("env=prod, role=db");
    expect(problemOf(() => parseLabelText("env=prod, env=dev", "labels")).message).toContain(
      'labels: the key "env" is given twice',
    );
    expect(problemOf(() => parseLabelText("env", "labels")).message).toContain(
      'labels: "env" is not key=value',
    );
    expect(problemOf(() => parseLabelText("env=a b", "labels")).message).toContain('the value "a b"');
  });
});

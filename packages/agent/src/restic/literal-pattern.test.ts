import { describe, expect, it } from "vitest";
import { literalPattern } from "./literal-pattern.js";

describe("literalPattern", () => {
  it("makes glob characters literal", () => {
    expect(literalPattern("/srv/we ird/ü ber[1].txt")).toBe("/srv/we ird/ü ber\\[1\\].txt");
    expect(literalPattern("/a/*?\\b")).toBe("/a/\\*\\?\\\\b");
    expect(literalPattern("/plain/path")).toBe("/plain/path");
  });
});

import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { shellLiteral } from "./shell-literal.js";

const hostile = [
  "plain",
  "",
  "it's",
  "'",
  "''''",
  "$(touch /tmp/fleetback-pwned)",
  "`id`",
  '"; rm -rf / #',
  "\\'\\",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion that must stay literal
  "${HOME}",
  "!!",
  "* ? [a]",
  "ünïcødé ✓",
];

describe("shellLiteral", () => {
  it("round-trips hostile values through bash unchanged", () => {
    const script = hostile.map((value) => `printf '%s\\0' ${shellLiteral(value)}`).join("\n");
    const result = spawnSync("bash", ["-c", script], { encoding: "utf8" });
    expect(result.status).toBe(0);
    expect(result.stdout.split("\0").slice(0, -1)).toEqual(hostile);
  });

  it("refuses control characters such as newlines, which would end the literal's line", () => {
    for (const value of ["a\nb", "a\rb", "a\u0000b", "\u001b[31m"]) {
      expect(() => shellLiteral(value)).toThrow(RangeError);
    }
  });
});

/**
 * A refused form folded away in a `<details>`, or with its bad input in a folded part of itself,
 * comes back unfolded there (and only there), so its message is on the screen.
 */
import { describe, expect, it } from "vitest";
import { markRefusedForm } from "./refused-form.js";

const PAGE = [
  "<details id=a><summary>Other</summary></details>",
  '<details id=b><summary>Change</summary><form method="post" action="/x">',
  '<input name="one"><details id=c><summary>More</summary><input name="two"></details>',
  '<details id=d open><summary>Kept</summary><input name="three"></details>',
  "</form></details>",
].join("");

describe("a refused form in folded sections", () => {
  it("opens the sections around the form and around each bad input, and no other", () => {
    const marked =
      markRefusedForm(PAGE, {
        action: "/x",
        values: { one: ["1"], two: ["2"] },
        problems: [{ field: "two", message: "is wrong" }],
      }) ?? "";
    expect(marked).toContain("<details id=a>");
    expect(marked).toContain("<details id=b open>");
    expect(marked).toContain("<details id=c open>");
    expect(marked).toContain("<details id=d open>");
    expect(marked).not.toContain("open open");
    expect(marked).toMatch(/name="two"[^>]*aria-invalid="true"/);
  });

  it("leaves a section closed whose inputs are all fine", () => {
    const marked =
      markRefusedForm(PAGE, {
        action: "/x",
        values: {},
        problems: [{ field: "one", message: "is wrong" }],
      }) ?? "";
    expect(marked).toContain("<details id=b open>");
    expect(marked).toContain("<details id=c>");
  });
});

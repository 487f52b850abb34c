/**
 * @module support/page-fit
 * Whether a page fits its window, asked of the page in the browser: what sticks out on the right,
 * which tables are wider than their box, which controls lie off the screen or in a box that clips
 * or scrolls them. Each answers sentences for a test's findings, empty when all is well.
 */
import type { Page } from "playwright-core";

/** The widest elements sticking out of the window, to say where a page overflows. */
export function overflowCulprits(page: Page): Promise<string[]> {
  return page.locator("html").evaluate((root) => {
    const limit = root.ownerDocument.defaultView?.innerWidth ?? root.clientWidth;
    const out: string[] = [];
    for (const el of Array.from(root.querySelectorAll("body *")) as Array<typeof root>) {
      const rect = el.getBoundingClientRect();
      if (rect.right > limit + 0.5 && rect.width > 0) {
        // Only the outermost: skip an element whose parent sticks out as well.
        const parent = el.parentElement?.getBoundingClientRect();
        if (parent && parent.right > limit + 0.5) {
          continue;
        }
        const id = el.id ? `#${el.id}` : "";
        const cls = typeof el.className === "string" && el.className ? `.${el.className.split(" ")[0]}` : "";
        const testid = el.getAttribute("data-testid");
        out.push(
          `${el.tagName.toLowerCase()}${id}${cls}${testid ? `[${testid}]` : ""} right=${Math.round(rect.right)}`,
        );
      }
    }
    return out.slice(0, 5);
  });
}

/**
 * Where the matches of `selector` are not fully on the screen: outside the window sideways, or
 * outside an ancestor that clips or scrolls them (overflow other than visible).
 */
export function offScreen(page: Page, selector: string): Promise<string[]> {
  return page.locator("html").evaluate((root, sel) => {
    const win = root.ownerDocument.defaultView;
    const limit = win?.innerWidth ?? root.clientWidth;
    const out: string[] = [];
    const found = Array.from(root.querySelectorAll(sel)) as Array<typeof root>;
    if (found.length === 0) {
      return ["none on the page"];
    }
    found.forEach((el, index) => {
      const box = el.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) {
        out.push(`#${index} not shown`);
        return;
      }
      if (box.left < -0.5 || box.right > limit + 0.5) {
        out.push(`#${index} at ${Math.round(box.left)}..${Math.round(box.right)} of ${limit}`);
        return;
      }
      for (let up = el.parentElement; up; up = up.parentElement) {
        if (win?.getComputedStyle(up).overflowX === "visible") {
          continue;
        }
        const clip = up.getBoundingClientRect();
        if (box.left < clip.left - 0.5 || box.right > clip.right + 0.5) {
          const cls = typeof up.className === "string" ? up.className : "";
          out.push(`#${index} clipped by ${up.tagName.toLowerCase()}.${cls} at ${Math.round(clip.right)}`);
          return;
        }
      }
    });
    return out;
  }, selector);
}

/** Tables wider than the box they sit in, or scrolling inside themselves. */
export function wideTables(page: Page): Promise<string[]> {
  return page.locator("html").evaluate((root) => {
    const out: string[] = [];
    for (const table of Array.from(root.querySelectorAll("main table")) as Array<typeof root>) {
      const box = table.getBoundingClientRect();
      const parent = table.parentElement;
      if (box.width === 0 || !parent) {
        continue;
      }
      const name = table.getAttribute("data-testid") ?? table.className.split(" ")[0] ?? "";
      if (box.width > parent.clientWidth + 1 || table.scrollWidth > table.clientWidth + 1) {
        out.push(
          `table ${name} ${Math.round(Math.max(box.width, table.scrollWidth))} px in ${parent.clientWidth}`,
        );
      }
    }
    return out;
  });
}

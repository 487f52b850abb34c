import { describe, expect, it } from "vitest";
import { loadStaticAssets } from "./assets.js";
import { formatBytes, formatDuration } from "./format.js";
import { createViews } from "./views.js";

const assets = loadStaticAssets();
const views = createViews({ assets });

describe("static assets", () => {
  it("serves htmx, pico and our own files with content hashes", () => {
    expect([...assets.keys()].sort()).toEqual([
      "/static/app.css",
      "/static/app.js",
      "/static/htmx.min.js",
      "/static/job-stream.js",
      "/static/pico.min.css",
    ]);
    for (const asset of assets.values()) {
      expect(asset.body.length).toBeGreaterThan(100);
      expect(asset.hash).toMatch(/^[0-9a-f]{12}$/);
    }
  });
});

describe("base layout", () => {
  it("escapes every value and loads scripts only from our origin", () => {
    const html = views.render("layouts/base.njk", { title: "<script>alert(1)</script>", csrfToken: 'x"y' });
    expect(html).not.toContain("<script>alert(1)</script>");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("x&quot;y");
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(2);
    for (const [, attrs, body] of scripts) {
      expect(body).toBe("");
      expect(attrs).toMatch(/src="\/static\/[a-z.]+\?v=[0-9a-f]{12}"/);
    }
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).toContain('"includeIndicatorStyles":false');
  });
});

describe("formats", () => {
  it.each([
    [0, "0 B"],
    [1023, "1023 B"],
    [1536, "1.50 KiB"],
    [65598, "64.1 KiB"],
    [5 * 1024 ** 3, "5.00 GiB"],
    [-1, "–"],
  ])("formatBytes(%s)", (input, expected) => {
    expect(formatBytes(input)).toBe(expected);
  });

  it.each([
    [4.2, "4 s"],
    [125, "2 min 5 s"],
    [7260, "2 h 1 min"],
  ])("formatDuration(%s)", (input, expected) => {
    expect(formatDuration(input)).toBe(expected);
  });
});
